// Package modelcall names the one way agentry's helpers make a model call
// of their own — the routing classifiers, chat compression's summary and
// the loop detector's check — so that none of them depends on another's
// package, nor on the session's dispatcher that serves the calls.
package modelcall

import (
	"context"

	"google.golang.org/adk/v2/model"
)

// Caller makes one non-streaming utility-model call and returns the
// aggregated response. The session's caller goes through the same
// backends, availability chain and retry loop as chat calls, without the
// chat's fallback handler.
type Caller func(ctx context.Context, req *model.LLMRequest) (*model.LLMResponse, error)
