package routing

import (
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
)

// Processor is the routing request processor, the last of the chain: it
// chooses the model of every model call through the Service and rewrites
// the request for it in place — req.Model, the generation config, the
// system instruction and the tool subset — before ADK's tool preprocessing
// and the hooks see it. Choosing inside the model would be too late: the
// declarations and config would still be the ones the previous model got.
type Processor struct {
	svc *Service
}

// NewProcessor returns the routing processor of svc.
func NewProcessor(svc *Service) *Processor { return &Processor{svc: svc} }

// Name implements processors.RequestProcessor.
func (p *Processor) Name() string { return "routing" }

// ProcessRequest implements processors.RequestProcessor. The invocation id
// is the prompt id: one Send is one user prompt, so the sequence-sticky
// model lasts for one prompt's tool-call sequence.
func (p *Processor) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	p.svc.Route(ctx, req, ctx.InvocationID())
	return nil
}
