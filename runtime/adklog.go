package runtime

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/global"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// adkLogScope is the instrumentation scope of ADK's OpenTelemetry log
// records (its telemetry package's system name).
const adkLogScope = "gcp.vertex.agent"

// heldContents keeps a model request's contents out of ADK's request log
// when no one reads that log.
//
// Between the last before-model callback and the model, ADK logs every
// content of the request as an OpenTelemetry log record (a
// "gen_ai.user.message" per content), whether or not a logger provider
// is installed: over a long conversation the largest per-call cost ADK
// adds that grows with the history. When the global logger provider's
// logger of ADK's scope is not enabled for that event (no provider, or
// one that drops it), the session's last before-model callback takes the
// contents off the request and the dispatcher, ADK's model, puts them
// back before it does anything else. Every callback and plugin sees the
// whole request; only the records no one would receive are not built.
// With a provider installed (an application that set one), nothing is
// held and ADK logs as it does.
type heldContents struct {
	log log.Logger

	mu       sync.Mutex
	req      *model.LLMRequest
	contents []*genai.Content
}

func newHeldContents() *heldContents {
	return &heldContents{log: global.GetLoggerProvider().Logger(adkLogScope)}
}

// callback is the agent's last before-model callback.
func (h *heldContents) callback(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	h.hold(ctx, req)
	return nil, nil
}

// hold takes req's contents off it, unless ADK's request log is read.
func (h *heldContents) hold(ctx context.Context, req *model.LLMRequest) {
	if len(req.Contents) == 0 || h.log.Enabled(ctx, log.EnabledParameters{EventName: "gen_ai.user.message"}) {
		return
	}
	h.mu.Lock()
	h.req, h.contents = req, req.Contents
	req.Contents = nil
	h.mu.Unlock()
}

// restore puts back the contents held from req, if any.
func (h *heldContents) restore(req *model.LLMRequest) {
	h.mu.Lock()
	if h.req == req {
		req.Contents = h.contents
		h.req, h.contents = nil, nil
	}
	h.mu.Unlock()
}
