// Package loopdetect is a port of gemini-cli's LoopDetectionService
// (packages/core/src/services/loopDetectionService.ts): it notices an agent
// stuck repeating itself, in three ways.
//
//   - The same tool call (or a cycle of up to five tool calls) repeated
//     ToolCallThreshold times in a row.
//   - The same stretch of streamed text "chanted" ContentThreshold times
//     close together, outside code blocks and other markdown that is
//     legitimately repetitive.
//   - After LLMCheckAfterTurns turns of one prompt, a model periodically
//     asked whether the conversation is making progress, with a second model
//     confirming a positive verdict.
//
// Once a loop is detected the Detector latches: every call returns the same
// Detection until ClearDetection (the caller is letting the model try to
// recover) or Reset (a new user prompt).
//
// Lengths and positions in streamed text are counted in UTF-16 code units,
// as JavaScript's String.length does, so that the chunk size and distances
// mean exactly what they mean in gemini-cli.
package loopdetect

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"google.golang.org/genai"
)

// Kind says which detector fired; the values are gemini-cli's LoopType.
type Kind string

const (
	// KindToolCalls is a tool call, or a short cycle of tool calls, repeated
	// ToolCallThreshold times in a row.
	KindToolCalls Kind = "consecutive_identical_tool_calls"
	// KindContent is streamed text repeating the same chunk over and over.
	KindContent Kind = "chanting_identical_sentences"
	// KindLLM is a loop judged by the loop-detection model(s).
	KindLLM Kind = "llm_detected_loop"
)

// Model aliases the Checker is asked to resolve; they are gemini-cli's
// model-config keys for the two loop-detection calls.
const (
	// ModelLoopDetection is the first, cheap check (gemini-cli: Flash).
	ModelLoopDetection = "loop-detection"
	// ModelDoubleCheck confirms a positive first verdict.
	ModelDoubleCheck = "loop-detection-double-check"
)

// ErrModelUnavailable, returned by a Checker (possibly wrapped) for the
// double-check model, means that model cannot be asked right now; the
// Detector then accepts the first model's verdict, as gemini-cli does when
// its availability service reports the double-check model unavailable.
var ErrModelUnavailable = errors.New("loopdetect: model unavailable")

// ErrLoopDetected is the cause of a stream stopped because a loop was
// detected again after its recovery turn.
var ErrLoopDetected = errors.New("loop detected")

// Detection describes a detected loop.
type Detection struct {
	// Kind is the detector that fired.
	Kind Kind
	// Detail is a human-readable description: the repeated tool call, the
	// repeated text, or the model's analysis.
	Detail string
	// Confidence is the accepted model's unproductive_state_confidence; it is
	// set for KindLLM only.
	Confidence float64
	// Count is gemini-cli's detection count: 1 for the first loop since
	// Reset, 2 for a loop detected again after ClearDetection, and so on.
	// gemini-cli nudges the model on 1 and stops the turn on more.
	Count int
	// ConfirmedBy is the alias of the model whose verdict was accepted
	// (ModelDoubleCheck, or ModelLoopDetection when the double-check model
	// was unavailable); set for KindLLM only.
	ConfirmedBy string
}

// Config tunes a Detector. The zero value of each field (or a negative
// value) selects gemini-cli's default, given in brackets.
type Config struct {
	// ToolCallThreshold is how many times a tool call, or cycle of tool
	// calls, must repeat back to back [5].
	ToolCallThreshold int
	// ContentThreshold is how many times a text chunk must recur [10].
	ContentThreshold int
	// ChunkSize is the length of the sliding text window, in UTF-16 code
	// units [50].
	ChunkSize int
	// MaxContentBuffer bounds the streamed text kept, in UTF-16 code units
	// [5000].
	MaxContentBuffer int
	// LLMCheckAfterTurns is the turn of a prompt from which the LLM check
	// runs [30].
	LLMCheckAfterTurns int
	// LLMCheckInterval is the initial number of turns between LLM checks [10].
	LLMCheckInterval int
	// MinLLMCheckInterval is the interval after a confident "yes" [5].
	MinLLMCheckInterval int
	// MaxLLMCheckInterval is the interval after a confident "no" [15].
	MaxLLMCheckInterval int
	// LLMHistoryTurns is how many recent history entries the LLM check sees
	// [20].
	LLMHistoryTurns int
	// LLMConfidence is the confidence at or above which a model's verdict
	// counts as a loop [0.9].
	LLMConfidence float64
	// DisableLLMCheck turns the LLM check off; the tool-call and content
	// detectors still run.
	DisableLLMCheck bool
}

// gemini-cli's constants.
const (
	defaultToolCallThreshold   = 5
	defaultContentThreshold    = 10
	defaultChunkSize           = 50
	defaultMaxContentBuffer    = 5000
	defaultLLMCheckAfterTurns  = 30
	defaultLLMCheckInterval    = 10
	defaultMinLLMCheckInterval = 5
	defaultMaxLLMCheckInterval = 15
	defaultLLMHistoryTurns     = 20
	defaultLLMConfidence       = 0.9
)

// withDefaults fills unset fields with gemini-cli's values.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ToolCallThreshold, defaultToolCallThreshold)
	def(&c.ContentThreshold, defaultContentThreshold)
	def(&c.ChunkSize, defaultChunkSize)
	def(&c.MaxContentBuffer, defaultMaxContentBuffer)
	def(&c.LLMCheckAfterTurns, defaultLLMCheckAfterTurns)
	def(&c.LLMCheckInterval, defaultLLMCheckInterval)
	def(&c.MinLLMCheckInterval, defaultMinLLMCheckInterval)
	def(&c.MaxLLMCheckInterval, defaultMaxLLMCheckInterval)
	def(&c.LLMHistoryTurns, defaultLLMHistoryTurns)
	if c.LLMConfidence <= 0 {
		c.LLMConfidence = defaultLLMConfidence
	}
	return c
}

// Checker makes one loop-detection model call. model is ModelLoopDetection
// or ModelDoubleCheck, to be resolved to a real model by the caller;
// contents is the request and schema the JSON schema the response must
// follow. The call must use SystemPrompt as its system instruction: the
// signature has no room for it, and without it the model does not know the
// criteria the schema's fields refer to. It returns the decoded JSON object.
//
// The Checker must not modify contents: the same slice is sent to both
// models, and its history entries are the caller's.
type Checker func(ctx context.Context, model string, contents []*genai.Content, schema map[string]any) (map[string]any, error)

// Detector watches one session. Its methods are safe for concurrent use:
// stream callbacks and turn hooks may run on different goroutines.
type Detector struct {
	cfg   Config
	check Checker
	log   *slog.Logger

	mu sync.Mutex

	// Tool calls: SHA-256 hex keys of the most recent calls, oldest first.
	toolKeys []string

	// Content: the streamed text and the chunks seen in it (content.go);
	// whether the stream is inside a ``` block.
	chunks      chunkTracker
	inCodeBlock bool

	// LLM check scheduling.
	turns         int
	interval      int
	lastCheckTurn int

	// The latch: latched holds while last is being reported; count survives
	// ClearDetection so that a repeated loop is reported as the second.
	latched bool
	last    Detection
	count   int

	// epoch changes on Reset, so that an LLM verdict about a previous prompt,
	// arriving after the lock was released for the model call, is dropped.
	epoch uint64
}

// New returns a Detector for one session. check makes the LLM check's model
// calls; a nil check disables the LLM check, as Config.DisableLLMCheck does.
func New(cfg Config, check Checker) *Detector {
	cfg = cfg.withDefaults()
	d := &Detector{
		cfg:    cfg,
		check:  check,
		log:    slog.Default(),
		chunks: newChunkTracker(cfg),
	}
	d.interval = cfg.LLMCheckInterval
	return d
}

// Reset prepares for a new user prompt: it clears all tracking, the latch,
// the detection count and the turn count.
func (d *Detector) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.toolKeys = d.toolKeys[:0]
	d.resetContent()
	// gemini-cli's reset() leaves inCodeBlock alone, so a prompt whose
	// answer ended inside an unclosed ``` block would start the next prompt
	// with content detection off; a new prompt starts outside any block here.
	d.inCodeBlock = false
	d.turns = 0
	d.interval = d.cfg.LLMCheckInterval
	d.lastCheckTurn = 0
	d.latched = false
	d.last = Detection{}
	d.count = 0
	d.epoch++
}

// ClearDetection releases the latch so that the model's recovery attempt is
// watched afresh. Tracking and the detection count are kept: if the loop
// carries on, it is detected again with Count one higher.
func (d *Detector) ClearDetection() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latched = false
}

// latch records det as the current detection. The caller holds d.mu.
func (d *Detector) latch(det Detection) Detection {
	d.count++
	det.Count = d.count
	d.latched = true
	d.last = det
	d.log.Debug("loop detected", "kind", det.Kind, "count", det.Count, "detail", det.Detail)
	return det
}
