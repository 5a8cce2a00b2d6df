// Package processors holds agentry's request processors: the ordered chain
// that rewrites every model request after ADK has built it and before any
// hook or other plugin sees it, and the content processor that gives the
// model its session context. Masking and routing processors plug into the
// same chain; this package does not know how they decide.
package processors

import (
	"fmt"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
)

// RequestProcessor rewrites a model request in place: its contents, model,
// generation config, system instruction and tool declarations.
type RequestProcessor interface {
	// Name identifies the processor in errors and logs.
	Name() string
	// ProcessRequest rewrites req. An error fails the model call.
	ProcessRequest(ctx agent.Context, req *model.LLMRequest) error
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

// Run applies every processor to req.
func (c *Chain) Run(ctx agent.Context, req *model.LLMRequest) error {
	for _, p := range c.procs {
		if err := p.ProcessRequest(ctx, req); err != nil {
			return fmt.Errorf("request processor %s: %w", p.Name(), err)
		}
	}
	return nil
}

// PluginName is the name of the plugin that runs the chain.
const PluginName = "agentry-request-processors"

// Plugin returns the ADK plugin that runs the chain in its
// BeforeModelCallback. ADK exposes no request-processor hook, so the chain
// rides on the first plugin of the runner: by then ADK has materialised the
// request (contents, system instruction, tool declarations), and plugins
// run in slice order before agent callbacks, so hooks placed after it see
// the processed request.
func (c *Chain) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name: PluginName,
		BeforeModelCallback: func(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
			return nil, c.Run(ctx, req)
		},
	})
}
