package runtime

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"google.golang.org/adk/v2/model"

	"github.com/agentry-dev/agentry/runtime/llm"
)

// Metadata keys the dispatcher sets on every complete model response, for the
// translator's usage events.
const (
	metaModel      = "agentry:model"
	metaDurationMs = "agentry:durationMs"
)

// Dispatcher is the ADK model of an agentry session. ADK asks it for every
// model call with the request the processor chain prepared; it picks the
// backend from req.Model, streams the backend's chunks and aggregates them
// into partial deltas and one complete response.
//
// Its Name is the session's configured model, which ADK puts in req.Model
// before the chain runs; the routing processor may rewrite req.Model.
type Dispatcher struct {
	resolver ModelResolver

	mu    sync.RWMutex
	model string
}

// NewDispatcher returns a dispatcher whose configured model is modelName.
func NewDispatcher(resolver ModelResolver, modelName string) *Dispatcher {
	return &Dispatcher{resolver: resolver, model: modelName}
}

// Name implements model.LLM: the configured model.
func (d *Dispatcher) Name() string { return d.Model() }

// Model returns the configured model.
func (d *Dispatcher) Model() string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.model
}

// SetModel changes the configured model for later calls. The name must
// parse; its backend is created on first use.
func (d *Dispatcher) SetModel(name string) error {
	if _, err := llm.ParseModel(name); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.model = name
	return nil
}

// GenerateContent implements model.LLM.
func (d *Dispatcher) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := context.Cause(ctx); err != nil {
			yield(nil, err)
			return
		}
		name := req.Model
		if name == "" {
			name = d.Model()
		}
		target, err := d.resolver.Resolve(ctx, name)
		if err != nil {
			yield(nil, err)
			return
		}
		start := time.Now()
		var responses iter.Seq2[*model.LLMResponse, error]
		if stream {
			responses = llm.Aggregate(target.Backend.GenerateContentStream(ctx, target.Model, req.Contents, req.Config))
		} else {
			responses = func(yield func(*model.LLMResponse, error) bool) {
				resp, err := target.Backend.GenerateContent(ctx, target.Model, req.Contents, req.Config)
				if err != nil {
					yield(nil, err)
					return
				}
				out := llm.ToLLMResponse(resp)
				out.TurnComplete = true
				yield(out, nil)
			}
		}
		for resp, err := range responses {
			if err != nil {
				// The invocation's cause (an abort) explains a cancelled
				// request better than the transport's error does.
				if cause := context.Cause(ctx); cause != nil {
					err = cause
				}
				yield(nil, fmt.Errorf("model %s: %w", target.String(), err))
				return
			}
			if !resp.Partial {
				if resp.CustomMetadata == nil {
					resp.CustomMetadata = map[string]any{}
				}
				resp.CustomMetadata[metaModel] = target.String()
				resp.CustomMetadata[metaDurationMs] = time.Since(start).Milliseconds()
			}
			if !yield(resp, nil) {
				return
			}
		}
	}
}

var _ model.LLM = (*Dispatcher)(nil)
