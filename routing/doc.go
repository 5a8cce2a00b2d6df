// Package routing decides which model serves each model call: the
// availability state machine, policy chains, the fallback handler, the
// router and its strategies, and the routing request processor.
//
// It re-implements gemini-cli's packages/core/src/availability and
// packages/core/src/routing so that a session degrades the same way
// gemini-cli does when a model runs out of quota or capacity: the
// [Availability] state machine records which models may not be called right
// now, a [Catalog] resolves the ordered [Chain] of models a request may fall
// back through, and the router picks the model for each turn.
//
// Model names follow the runtime's scheme syntax: a bare name or one with
// the "gemini:" scheme is a Gemini model or alias and takes part in
// gemini-cli's alias resolution; names with any other scheme
// ("openai:gpt-4o", "replay:x.jsonl") are opaque and pass through unchanged,
// so they can still appear in user-configured chains.
package routing
