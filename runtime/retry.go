package runtime

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/cenkalti/backoff/v4"

	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime/llm"
)

// Retry delays, gemini-cli's (utils/retry.ts).
const (
	DefaultInitialDelay = 5 * time.Second
	DefaultMaxDelay     = 30 * time.Second
	// silentCapacityAttempts is how many capacity failures are retried
	// quietly before the fallback handler is asked.
	silentCapacityAttempts = 3
	// Capacity retry delays when the server names none: 1 s, then 3 s.
	firstCapacityDelay  = time.Second
	secondCapacityDelay = 3 * time.Second
	// maxStreamAttempts bounds the attempts at a chat stream that started
	// and then failed or ended invalid (gemini-cli's
	// MID_STREAM_RETRY_OPTIONS); they wait 1 s, 2 s, 4 s.
	maxStreamAttempts = 4
)

// RetryConfig tunes the dispatcher's retry loop. The zero value is
// gemini-cli's: 10 attempts, 5 s doubling to 30 s.
type RetryConfig struct {
	// MaxAttempts bounds attempts per model when no routing policy does;
	// 0 is 10.
	MaxAttempts int
	// InitialDelay and MaxDelay bound the exponential backoff.
	InitialDelay, MaxDelay time.Duration
	// NewTimer makes the timer the loop sleeps on; nil uses real timers.
	// Tests inject one that fires at once and records the delays.
	NewTimer func() backoff.Timer
	// Rand returns a number in [0, 1) for the jitter; nil is math/rand/v2.
	Rand func() float64
}

func (c RetryConfig) withDefaults() RetryConfig {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = routing.DefaultMaxAttempts
	}
	if c.InitialDelay <= 0 {
		c.InitialDelay = DefaultInitialDelay
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return c
}

// quotaBackOff is gemini-cli's retry delay policy as a backoff.BackOff.
// The operation classifies each failure and sets the next delay through
// exponential, server or now; NextBackOff hands it to the backoff loop,
// which sleeps on its timer and gives up when the context ends.
type quotaBackOff struct {
	initial, max time.Duration
	rand         func() float64
	current      time.Duration
	next         time.Duration
}

func newQuotaBackOff(c RetryConfig) *quotaBackOff {
	return &quotaBackOff{initial: c.InitialDelay, max: c.MaxDelay, rand: c.Rand, current: c.InitialDelay, next: backoff.Stop}
}

// Reset implements backoff.BackOff.
func (b *quotaBackOff) Reset() { b.current, b.next = b.initial, backoff.Stop }

// NextBackOff implements backoff.BackOff: the delay the operation chose,
// or Stop when it chose none.
func (b *quotaBackOff) NextBackOff() time.Duration {
	n := b.next
	b.next = backoff.Stop
	return n
}

// exponential waits the current delay ±30 %, then doubles it up to max.
func (b *quotaBackOff) exponential() {
	jitter := float64(b.current) * 0.3 * (b.rand()*2 - 1)
	b.next = max(0, b.current+time.Duration(jitter))
	b.current = min(b.max, 2*b.current)
}

// server honours a server-requested delay: it waits that long plus up to
// 20 %, never less than the server asked. gemini-cli waits at least its
// current backoff (5 s at first), which makes a 2 s RetryInfo a 5-6 s
// wait; the exponential delay is for failures that name none.
func (b *quotaBackOff) server(delay time.Duration) {
	b.next = delay + time.Duration(float64(delay)*0.2*b.rand())
}

// now retries at once with the delay reset: the fallback handler chose a
// model that has not failed yet.
func (b *quotaBackOff) now() { b.current, b.next = b.initial, 0 }

// realTimer is a backoff.Timer on a real time.Timer.
type realTimer struct{ t *time.Timer }

func (r *realTimer) Start(d time.Duration) { r.t = time.NewTimer(d) }

func (r *realTimer) Stop() {
	if r.t != nil {
		r.t.Stop()
	}
}

func (r *realTimer) C() <-chan time.Time { return r.t.C }

// The nudges gemini-cli adds to the retry of an answerless stream
// (geminiChat.ts).
const (
	thinkingOnlyNudge   = "[System: You previously generated thoughts but failed to provide a final user-facing response. Please ensure you provide your final answer or call a tool now.]"
	noResponseTextNudge = "[System: You previously returned an empty response with no text or thoughts. Please ensure you provide your final answer or call a tool now.]"
	toolsDoneText       = "[Tool execution completed.]"
)

// applyRetryNudge asks the model for an answer when the last attempt gave
// thoughts only or nothing at all, as gemini-cli's applyRetryNudge does:
// the nudge joins the last user turn, or follows a closing model turn
// when that user turn answered function calls. contents is the attempt's
// own copy; its parts are not written.
func applyRetryNudge(contents []*genai.Content, kind string) []*genai.Content {
	var nudge string
	switch kind {
	case llm.InvalidThinkingOnlyResponse:
		nudge = thinkingOnlyNudge
	case llm.InvalidNoResponseText:
		nudge = noResponseTextNudge
	default:
		return contents
	}
	last := len(contents) - 1
	if last < 0 || contents[last] == nil || contents[last].Role != genai.RoleUser {
		return append(contents, genai.NewContentFromText(nudge, genai.RoleUser))
	}
	if answersCalls(contents) {
		return append(contents, genai.NewContentFromText(toolsDoneText, genai.RoleModel), genai.NewContentFromText(nudge, genai.RoleUser))
	}
	c := *contents[last]
	c.Parts = append(c.Parts[:len(c.Parts):len(c.Parts)], &genai.Part{Text: "\n" + nudge})
	contents[last] = &c
	return contents
}

// retryNotice is the one line a retry shows the user, in gemini-cli's
// words ("Attempt 1 failed: … Retrying after 2153ms...").
func retryNotice(attempt int, err error, delay time.Duration) string {
	return fmt.Sprintf("Attempt %d failed: %s. Retrying after %dms...", attempt, briefError(err), delay.Round(time.Millisecond).Milliseconds())
}

// briefError is the first line of an error's message, without a URL an
// HTTP client put in front of it.
func briefError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	msg := llm.Classify(err).Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimRight(strings.TrimSpace(msg), ".")
}
