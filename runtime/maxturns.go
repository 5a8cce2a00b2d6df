package runtime

import "context"

// maxTurnsKey is the context key of WithMaxTurns.
type maxTurnsKey struct{}

// WithMaxTurns returns ctx carrying a model-call limit for the stream that
// a Send with it starts (a subagent's one-turn recovery stream); n <= 0
// keeps the session's limit.
func WithMaxTurns(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, maxTurnsKey{}, n)
}

// maxTurnsFrom returns the limit WithMaxTurns put in ctx, or 0.
func maxTurnsFrom(ctx context.Context) int {
	n, _ := ctx.Value(maxTurnsKey{}).(int)
	return n
}
