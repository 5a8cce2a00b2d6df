// Package processors holds agentry's request processors: the ordered chain
// that rewrites every model request after ADK has built it and before any
// hook or other plugin sees it, and the content processor that gives the
// model its session context. Masking and routing processors plug into the
// same chain; this package does not know how they decide.
package processors

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/tool"
)

// RequestProcessor rewrites a model request in place: its contents, model,
// generation config, system instruction and tool declarations.
type RequestProcessor interface {
	// Name identifies the processor in errors and logs.
	Name() string
	// ProcessRequest rewrites req. An error fails the model call.
	ProcessRequest(ctx agent.Context, req *model.LLMRequest) error
}

// Settler is a RequestProcessor that leaves work running while the
// request goes to the model: the masking processor writes its spill files
// and persists in the background. Settle waits for that work of session
// sessionID and returns its error, once; the chain settles before the
// model's answer is acted on.
type Settler interface {
	Settle(ctx context.Context, sessionID string) error
}

// Chain runs processors in one explicit order, each seeing the previous
// one's rewrite.
type Chain struct {
	procs []RequestProcessor
}

// NewChain returns a chain running procs in the given order.
func NewChain(procs ...RequestProcessor) *Chain {
	return &Chain{procs: append([]RequestProcessor(nil), procs...)}
}

// Processors returns the processors in order.
func (c *Chain) Processors() []RequestProcessor {
	return append([]RequestProcessor(nil), c.procs...)
}

// Run applies every processor to req. When one fails, the request is not
// sent, so the work the earlier ones left running is settled first.
func (c *Chain) Run(ctx agent.Context, req *model.LLMRequest) error {
	for _, p := range c.procs {
		if err := p.ProcessRequest(ctx, req); err != nil {
			err = fmt.Errorf("request processor %s: %w", p.Name(), err)
			return errors.Join(err, c.Settle(context.WithoutCancel(ctx), ctx.SessionID()))
		}
	}
	return nil
}

// Settle settles every Settler of the chain for session sessionID, in
// order, and joins their errors.
func (c *Chain) Settle(ctx context.Context, sessionID string) error {
	var errs []error
	for _, p := range c.procs {
		if s, ok := p.(Settler); ok {
			if err := s.Settle(ctx, sessionID); err != nil {
				errs = append(errs, fmt.Errorf("request processor %s: %w", p.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// PluginName is the name of the plugin that runs the chain.
const PluginName = "agentry-request-processors"

// Plugin returns the ADK plugin that runs the chain in its
// BeforeModelCallback. ADK exposes no request-processor hook, so the chain
// rides on the first plugin of the runner: by then ADK has materialised the
// request (contents, system instruction, tool declarations), and plugins
// run in slice order before agent callbacks, so hooks placed after it see
// the processed request.
//
// The plugin also settles the chain (Settle) on the model's first
// response or its error, so that background work overlaps the model call
// and is done before the answer is acted on, and again before every tool
// call, for answers that did not come from the model (a plugin's own
// response skips ADK's after-model callbacks). The runner settles once
// more when a run ends. With nothing pending a settle is a map lookup.
func (c *Chain) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name: PluginName,
		BeforeModelCallback: func(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
			return nil, c.Run(ctx, req)
		},
		AfterModelCallback: func(ctx agent.Context, _ *model.LLMResponse, _ error) (*model.LLMResponse, error) {
			return nil, c.Settle(ctx, ctx.SessionID())
		},
		OnModelErrorCallback: func(ctx agent.Context, _ *model.LLMRequest, llmErr error) (*model.LLMResponse, error) {
			// A nil error lets the model's own error through unchanged.
			if err := c.Settle(context.WithoutCancel(ctx), ctx.SessionID()); err != nil {
				return nil, errors.Join(llmErr, err)
			}
			return nil, nil
		},
		BeforeToolCallback: func(ctx agent.Context, _ tool.Tool, _ map[string]any) (map[string]any, error) {
			return nil, c.Settle(ctx, ctx.SessionID())
		},
	})
}
