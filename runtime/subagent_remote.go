package runtime

import (
	"context"
	"errors"

	"github.com/agentry-dev/agentry/agents"
)

// remoteAgents holds a parent session's remote agents.
type remoteAgents struct{}

func (r *remoteAgents) close() error { return nil }

// runRemote runs a remote agent on prompt.
func (t *subagentTool) runRemote(ctx context.Context, def agents.Definition, prompt string, sink func(Event)) (SubagentResult, error) {
	return SubagentResult{}, errors.New("remote agents are not supported yet")
}
