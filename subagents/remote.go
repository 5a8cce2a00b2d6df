package subagents

import (
	"context"
	"log/slog"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/runtime"
)

// RemoteInvoker runs the invoke_agent tool's tasks on remote A2A agents
// for one parent session. Package agents/remote implements it over
// a2a-go's client; the invoke_agent tool calls it and never speaks A2A itself.
type RemoteInvoker interface {
	// Invoke sends prompt to the remote agent def and waits for its task
	// to complete, fail or ask for input, within the subagent time limit.
	// The remote task's calls that need a human go to approver, the
	// parent's (nil: they are declined), through ChildApprover: named
	// with the agent's label, the time limit paused while the parent
	// decides. The agent's events go to sink, when set, with the agent's
	// thread id in _meta. Failures of the agent are results the parent's
	// model reads; only a parent that gives up (ctx) makes it return an
	// error.
	Invoke(ctx context.Context, def agents.Definition, prompt string, approver runtime.Approver, sink func(runtime.Event)) (Result, error)
	// Close releases the connections; Invoke fails with runtime.ErrClosed after.
	Close() error
}

// NewRemoteInvoker returns the RemoteInvoker of one parent session; log
// receives its diagnostics.
type NewRemoteInvoker func(log *slog.Logger) RemoteInvoker
