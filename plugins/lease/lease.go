// Package lease stops a session's turn when the replica serving it no
// longer holds its context (package cluster): an ADK plugin whose
// BeforeModel and BeforeTool callbacks ask a check and, when it fails,
// warn with the check's error and cancel the stream, so that a turn a replica lost
// never makes another model or tool call.
package lease

import (
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/tool"

	"github.com/agentry-dev/agentry/runtime/handle"
)

// Name is the plugin's name.
const Name = "agentry-lease"

// WarningCode is the code of the warning a stopped stream carries.
const WarningCode = "lease_lost"

// New returns the plugin; check returns nil while the session may go on
// (cluster.Node.Check for the session's context).
func New(check func() error) (*plugin.Plugin, error) {
	stop := func(ctx agent.Context) error {
		err := check()
		if err != nil {
			if s := handle.From(ctx); s != nil {
				s.Warn(WarningCode, err.Error())
				s.Cancel(err)
			}
		}
		return err
	}
	return plugin.New(plugin.Config{
		Name: Name,
		BeforeModelCallback: func(ctx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
			return nil, stop(ctx)
		},
		BeforeToolCallback: func(ctx agent.Context, _ tool.Tool, _ map[string]any) (map[string]any, error) {
			return nil, stop(ctx)
		},
	})
}
