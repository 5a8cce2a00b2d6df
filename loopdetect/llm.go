package loopdetect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"google.golang.org/genai"
)

// SystemPrompt is gemini-cli's system instruction for the loop-detection
// models. A Checker must send it as the system instruction of every call.
const SystemPrompt = `You are a diagnostic agent that determines whether a conversational AI assistant is stuck in an unproductive loop. Analyze the conversation history (and, if provided, the original user request) to make this determination.

## What constitutes an unproductive state

An unproductive state requires BOTH of the following to be true:
1. The assistant has exhibited a repetitive pattern over at least 5 consecutive model actions (tool calls or text responses, counting only model-role turns).
2. The repetition produces NO net change or forward progress toward the user's goal.

Specific patterns to look for:
- **Alternating cycles with no net effect:** The assistant cycles between the same actions (e.g., edit_file → run_build → edit_file → run_build) where each iteration applies the same edit and encounters the same error, making zero progress. Note: alternating between actions is only a loop if the arguments and outcomes are substantively identical each cycle. If the assistant is modifying different code or getting different errors, that is debugging progress, not a loop.
- **Semantic repetition with identical outcomes:** The assistant calls the same tool with semantically equivalent arguments (same file, same line range, same content) multiple times consecutively, and each call produces the same outcome. This does NOT include build/test commands that are re-run after making code changes between invocations — re-running a build to verify a fix is normal workflow.
- **Stuck reasoning:** The assistant produces multiple consecutive text responses that restate the same plan, question, or analysis without taking any new action or making a decision. This does NOT include command output that happens to contain repeated status lines or warnings.

## What is NOT an unproductive state

You MUST distinguish repetitive-looking but productive work from true loops. The following are examples of forward progress and must NOT be flagged:

- **Cross-file batch operations:** A series of tool calls with the same tool name but targeting different files (different file paths in the arguments). For example, adding license headers to 20 files, or running the same refactoring across multiple modules.
- **Incremental same-file edits:** Multiple edits to the same file that target different line ranges, different functions, or different text content (e.g., adding docstrings to functions one by one).
- **Sequential processing:** A series of read or search operations on different files/paths to gather information.
- **Retry with variation:** Re-attempting a failed operation with modified arguments or a different approach.

## Argument analysis (critical)

When evaluating tool calls, you MUST compare the **arguments** of each call, not just the tool name. Pay close attention to:
- **File paths:** Different file paths mean different targets — this is distinct work, not repetition.
- **Line numbers and text content:** Different line ranges or different old_string/new_string values indicate distinct edits.
- **Search queries and patterns:** Different search terms indicate information gathering, not looping.

A loop exists only when the same tool is called with semantically equivalent arguments repeatedly, indicating no forward progress.

## Using the original user request

If the original user request is provided, use it to contextualize the assistant's behavior. If the request implies a batch or multi-step operation (e.g., "update all files", "refactor every module", "add tests for each function"), then repetitive tool calls with varying arguments are expected and should weigh heavily against flagging a loop.`

// taskPrompt is the final user turn of the check's request.
const taskPrompt = `Please analyze the conversation history to determine the possibility that the conversation is stuck in a repetitive, non-productive state. Consider the original user request when evaluating whether repeated tool calls represent legitimate batch work or an actual loop. Provide your response in the requested JSON format.`

// The response fields.
const (
	analysisField   = "unproductive_state_analysis"
	confidenceField = "unproductive_state_confidence"
)

// ResponseSchema returns the JSON schema the Checker's response must
// follow (gemini-cli's LOOP_DETECTION_SCHEMA). Each call returns a new map,
// so a Checker may modify it.
func ResponseSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			analysisField: map[string]any{
				"type":        "string",
				"description": "Your reasoning on if the conversation is looping without forward progress.",
			},
			confidenceField: map[string]any{
				"type":        "number",
				"description": "A number between 0.0 and 1.0 representing your confidence that the conversation is in an unproductive state.",
			},
		},
		"required": []any{analysisField, confidenceField},
	}
}

// TurnStarted is called at the start of each model turn of the current
// prompt. It counts the turn and, from turn LLMCheckAfterTurns on, every
// interval turns, asks the loop-detection model about the recent history;
// a verdict at or above LLMConfidence is confirmed by the double-check
// model before it counts. userRequest is the prompt's original request
// (empty to leave it out) and history the conversation so far, oldest
// first; only its last LLMHistoryTurns entries are sent.
//
// The next check comes sooner the more confident the model was that the
// conversation is looping. A malformed model response is treated as "no
// verdict", as in gemini-cli. A Checker error also yields no detection; it
// is returned, wrapped, for the caller to log, and leaves the Detector ready
// for the next check. While a detection is latched the turn is not counted
// and the latched detection is returned.
//
// The lock is not held during the model calls; a verdict that arrives after
// Reset is discarded.
func (d *Detector) TurnStarted(ctx context.Context, userRequest string, history []*genai.Content) (Detection, bool, error) {
	d.mu.Lock()
	if d.latched {
		det := d.last
		d.mu.Unlock()
		return det, true, nil
	}
	d.turns++
	if d.cfg.DisableLLMCheck || d.check == nil ||
		d.turns < d.cfg.LLMCheckAfterTurns || d.turns-d.lastCheckTurn < d.interval {
		d.mu.Unlock()
		return Detection{}, false, nil
	}
	d.lastCheckTurn = d.turns
	epoch := d.epoch
	d.mu.Unlock()

	v := d.askModels(ctx, userRequest, history)

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.epoch != epoch {
		d.log.Debug("loop check verdict dropped: detector was reset during the check")
		return Detection{}, false, v.err
	}
	if v.adjust {
		d.interval = d.nextInterval(v.confidence)
	}
	if !v.loop {
		return Detection{}, false, v.err
	}
	if d.latched {
		// Another detector fired while the models were thinking.
		return d.last, true, nil
	}
	return d.latch(v.det), true, nil
}

// verdict is the outcome of the model calls.
type verdict struct {
	loop bool
	det  Detection
	// adjust says to reschedule the next check from confidence.
	adjust     bool
	confidence float64
	err        error
}

// askModels is gemini-cli's checkForLoopWithLLM. It touches no Detector
// state but the immutable cfg, check and log.
func (d *Detector) askModels(ctx context.Context, userRequest string, history []*genai.Content) verdict {
	contents := checkContents(userRequest, history, d.cfg.LLMHistoryTurns)

	first, err := d.check(ctx, ModelLoopDetection, contents, ResponseSchema())
	if err != nil {
		return verdict{err: fmt.Errorf("loopdetect: %s check: %w", ModelLoopDetection, err)}
	}
	conf, ok := confidence(first)
	if !ok {
		d.log.Debug("loop check: malformed response", "model", ModelLoopDetection, "response", first)
		return verdict{}
	}
	analysis, _ := first[analysisField].(string)
	if conf < d.cfg.LLMConfidence {
		return verdict{adjust: true, confidence: conf}
	}

	second, err := d.check(ctx, ModelDoubleCheck, contents, ResponseSchema())
	if errors.Is(err, ErrModelUnavailable) {
		return verdict{loop: true, det: Detection{
			Kind: KindLLM, Detail: analysis, Confidence: conf, ConfirmedBy: ModelLoopDetection,
		}}
	}
	if err != nil {
		return verdict{err: fmt.Errorf("loopdetect: %s check: %w", ModelDoubleCheck, err)}
	}
	conf2, ok := confidence(second)
	if !ok {
		d.log.Debug("loop check: malformed response", "model", ModelDoubleCheck, "response", second)
		return verdict{}
	}
	if conf2 < d.cfg.LLMConfidence {
		return verdict{adjust: true, confidence: conf2}
	}
	analysis2, _ := second[analysisField].(string)
	return verdict{loop: true, det: Detection{
		Kind: KindLLM, Detail: analysis2, Confidence: conf2, ConfirmedBy: ModelDoubleCheck,
	}}
}

// nextInterval maps a "no loop" confidence to the turns until the next
// check: MinLLMCheckInterval at confidence 1, MaxLLMCheckInterval at 0.
func (d *Detector) nextInterval(conf float64) int {
	lo, hi := d.cfg.MinLLMCheckInterval, d.cfg.MaxLLMCheckInterval
	// math.Floor(x+0.5) is JavaScript's Math.round (halves go up: 7.5 → 8).
	v := int(math.Floor(float64(lo) + float64(hi-lo)*(1-conf) + 0.5))
	// gemini-cli does not clamp; a confidence outside [0, 1] would otherwise
	// push the interval outside [min, max].
	return min(max(v, lo), hi)
}

// confidence extracts unproductive_state_confidence if it is a number,
// gemini-cli's typeof === 'number' test, widened to the number types a Go
// JSON decoder may produce. NaN and infinities are rejected: JSON cannot
// carry them, and NaN would stop all further checks.
func confidence(resp map[string]any) (float64, bool) {
	var f float64
	switch v := resp[confidenceField].(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case int32:
		f = float64(v)
	case json.Number:
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// checkContents builds the check's request: the original request, the
// recent history trimmed to whole call/response pairs, and the task.
func checkContents(userRequest string, history []*genai.Content, turns int) []*genai.Content {
	h := make([]*genai.Content, 0, len(history))
	for _, c := range history {
		if c != nil { // a nil entry would only break the Checker
			h = append(h, c)
		}
	}
	if len(h) > turns {
		h = h[len(h)-turns:]
	}
	// A function response must follow its call, and a call be followed by
	// its response: drop the dangling ends the cut left.
	for len(h) > 0 && isFunctionCall(h[len(h)-1]) {
		h = h[:len(h)-1]
	}
	for len(h) > 0 && isFunctionResponse(h[0]) {
		h = h[1:]
	}

	contents := make([]*genai.Content, 0, len(h)+3)
	if userRequest != "" {
		contents = append(contents, userText("<original_user_request>\n"+userRequest+"\n</original_user_request>"))
	}
	contents = append(contents, h...)
	contents = append(contents, userText(taskPrompt))
	if isFunctionCall(contents[0]) {
		// The request must not open with a model turn's function call.
		contents = append([]*genai.Content{userText("Recent conversation history:")}, contents...)
	}
	return contents
}

func userText(text string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}
}

// isFunctionCall is gemini-cli's: a model turn made only of function calls.
func isFunctionCall(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleModel || len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if p == nil || p.FunctionCall == nil {
			return false
		}
	}
	return true
}

// isFunctionResponse is gemini-cli's: a user turn with any function response.
func isFunctionResponse(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}
