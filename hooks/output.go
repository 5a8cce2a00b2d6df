package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
)

// Decisions as reported in Result.Decision. Hooks may also answer "deny"
// (reported as DecisionBlock) and "approve" (reported as DecisionAllow).
const (
	DecisionAllow = "allow"
	DecisionAsk   = "ask"
	DecisionBlock = "block"
	DecisionDeny  = "deny"
)

// Tool calling modes a BeforeToolSelection hook can ask for.
const (
	ModeAuto = "AUTO"
	ModeAny  = "ANY"
	ModeNone = "NONE"
)

// noReason is gemini-cli's getEffectiveReason fallback.
const noReason = "No reason provided"

// ToolConfig is the tool calling configuration BeforeToolSelection hooks
// ask for (gemini-cli's HookToolConfig).
type ToolConfig struct {
	// Mode is AUTO, ANY or NONE.
	Mode string `json:"mode,omitempty"`
	// AllowedFunctionNames lists the tools the model may call, sorted.
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// Failure describes a hook that did not produce an answer: it could not be
// started (including the shell's exit codes 126 and 127), timed out, was
// killed by a signal (including a shell's 128+N report of its command's
// death), was cancelled, or exited 0 after printing a JSON object that
// cannot be read. The run goes on without it and Config.DefaultDecision
// stands in for its answer.
type Failure struct {
	// Hook is the hook's Command.ID.
	Hook string
	// Event is the event it ran for.
	Event Event
	// Err says what went wrong.
	Err error
	// Stderr is the end of what the hook wrote to stderr, for diagnosis.
	Stderr string
	// ExitCode is the shell's exit code, or -1 when it did not exit by
	// itself (not started, killed by a signal).
	ExitCode int
	// TimedOut is set when the hook outlived its timeout.
	TimedOut bool
}

// Error describes the failure in one line.
func (f Failure) Error() string {
	return fmt.Sprintf("hook %q (%s): %v", f.Hook, f.Event, f.Err)
}

// Unwrap returns the underlying error.
func (f Failure) Unwrap() error { return f.Err }

// Result is what the hooks matched for one event said, combined the way
// gemini-cli combines them for that event.
type Result struct {
	// Decision is allow, ask or block ("deny" is reported as block), or ""
	// when no hook ran.
	Decision string
	// Continue is false when a hook asked to stop the agent loop.
	Continue bool
	// StopReason is the stopReason of the hooks that stopped the loop.
	StopReason string
	// Reason is the hooks' reason. When the result blocks or stops, it is
	// gemini-cli's effective reason: stopReason, else reason, else
	// "No reason provided".
	Reason string
	// SystemMessage is for the user.
	SystemMessage string
	// AdditionalContext is for the model, with < and > escaped as &lt; and
	// &gt; so that a hook cannot close or open the tags it is wrapped in.
	AdditionalContext string
	// ToolInput holds BeforeTool argument overrides, to merge over the
	// model's arguments.
	ToolInput map[string]any
	// LLMRequest holds BeforeModel request overrides.
	LLMRequest map[string]any
	// LLMResponse is a synthetic (BeforeModel) or replacement (AfterModel)
	// response.
	LLMResponse map[string]any
	// ToolConfig is the combined BeforeToolSelection answer, nil when no hook
	// gave one.
	ToolConfig *ToolConfig
	// ClearContext asks (AfterAgent) to clear the model's history.
	ClearContext bool
	// SuppressOutput asks to hide the hook's details from logs.
	SuppressOutput bool
	// Failures lists hooks that produced no answer.
	Failures []Failure
	// Ran counts the hooks that were started or attempted, failures
	// included.
	Ran int
}

// Blocked reports whether the hooks blocked the action.
func (r Result) Blocked() bool { return r.Decision == DecisionBlock }

// hookOutput is the JSON a hook prints. Pointers tell an absent field from
// a zero one, which the model events' "later fields override" merge needs.
type hookOutput struct {
	Continue           *bool          `json:"continue,omitempty"`
	StopReason         *string        `json:"stopReason,omitempty"`
	SuppressOutput     *bool          `json:"suppressOutput,omitempty"`
	SystemMessage      *string        `json:"systemMessage,omitempty"`
	Decision           *string        `json:"decision,omitempty"`
	Reason             *string        `json:"reason,omitempty"`
	HookSpecificOutput map[string]any `json:"hookSpecificOutput,omitempty"`
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Exit codes with a fixed meaning. 126 and 127 are the shell's own "found
// but not executable" and "not found"; 128+N is how a shell reports that
// the command it ran was killed by signal N.
const (
	exitSuccess         = 0
	exitNonBlockingErr  = 1
	exitCannotExecute   = 126
	exitCommandNotFound = 127
	exitSignalBase      = 128
	maxSignal           = 64
)

// crashError tells whether exitCode is the shell's report of a command
// that never ran or died of a signal rather than an answer: such a hook
// crashed, and gemini-cli's "every other code blocks" would turn crashes
// into decisions.
func crashError(exitCode int) error {
	switch {
	case exitCode == exitCannotExecute || exitCode == exitCommandNotFound:
		return fmt.Errorf("shell exit code %d: command not found or not executable", exitCode)
	case exitCode > exitSignalBase && exitCode <= exitSignalBase+maxSignal:
		sig := syscall.Signal(exitCode - exitSignalBase)
		return fmt.Errorf("shell exit code %d: command killed by signal %d (%v)", exitCode, int(sig), sig)
	}
	return nil
}

// errMalformedOutput is wrapped by failures of hooks whose JSON answer
// could not be read.
var errMalformedOutput = errors.New("malformed JSON output")

// parseOutput turns what a hook printed and its exit code into its answer,
// following gemini-cli's HookRunner: a JSON object on stdout (or, if stdout
// is empty, stderr) is the answer; other text becomes one according to the
// exit code. It returns (nil, nil) for a hook that said nothing and an
// error for one whose answer cannot be known.
func parseOutput(stdout, stderr []byte, exitCode int) (*hookOutput, error) {
	text := strings.TrimSpace(string(stdout))
	if text == "" {
		text = strings.TrimSpace(string(stderr))
	}
	if text == "" {
		if err := crashError(exitCode); err != nil {
			return nil, err
		}
		switch exitCode {
		case exitSuccess, exitNonBlockingErr:
			return nil, nil
		default:
			// gemini-cli ignores a silent blocking exit; a hook that exits 2
			// means to block, so it does here, with the default reason.
			return &hookOutput{Decision: ptr(DecisionDeny)}, nil
		}
	}
	out, isJSON, err := decodeJSONOutput(text)
	switch {
	case isJSON && err == nil:
		return out, nil
	case isJSON && exitCode == exitSuccess:
		// The hook meant to answer in JSON and claims success, but what it
		// meant cannot be read: let the default decision stand in.
		return nil, err
	}
	if err := crashError(exitCode); err != nil {
		return nil, err
	}
	switch exitCode {
	case exitSuccess:
		return &hookOutput{Decision: ptr(DecisionAllow), SystemMessage: ptr(text)}, nil
	case exitNonBlockingErr:
		return &hookOutput{Decision: ptr(DecisionAllow), SystemMessage: ptr("Warning: " + text)}, nil
	default:
		// gemini-cli blocks on every exit code other than 0 and 1.
		return &hookOutput{Decision: ptr(DecisionDeny), Reason: ptr(text)}, nil
	}
}

// decodeJSONOutput reads text as a hook's JSON answer. isJSON is false when
// text is plain text to be interpreted by exit code; it is true with an
// error when text is an object (or starts like one) that cannot be read.
// As in gemini-cli, a JSON string holding an object is accepted too.
func decodeJSONOutput(text string) (out *hookOutput, isJSON bool, err error) {
	data := []byte(text)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		if strings.HasPrefix(text, "{") {
			return nil, true, fmt.Errorf("%w: %w", errMalformedOutput, err)
		}
		return nil, false, nil
	}
	if s, ok := v.(string); ok {
		data = []byte(s)
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, false, nil
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, false, nil
	}
	var o hookOutput
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, true, fmt.Errorf("%w: %w", errMalformedOutput, err)
	}
	return &o, true, nil
}

// excerptLimit bounds the stderr kept in a Failure.
const excerptLimit = 2048

// excerpt returns the end of s, where errors usually are.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= excerptLimit {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-excerptLimit:], "")
}

// normaliseDecision maps a hook's decision onto allow, ask or block. Like
// gemini-cli, anything that is neither blocking nor "ask" allows.
func normaliseDecision(d string) string {
	switch d {
	case DecisionBlock, DecisionDeny:
		return DecisionBlock
	case DecisionAsk:
		return DecisionAsk
	default:
		return DecisionAllow
	}
}

// mergeOutputs combines the answers of the hooks that ran for event with
// gemini-cli's per-event strategy (HookAggregator.mergeOutputs).
func mergeOutputs(event Event, outs []hookOutput) hookOutput {
	switch event {
	case BeforeTool, AfterTool, BeforeAgent, AfterAgent, SessionStart:
		return mergeWithOrDecision(outs)
	case BeforeModel, AfterModel:
		return mergeWithFieldReplacement(outs)
	case BeforeToolSelection:
		return mergeToolSelection(outs)
	default:
		return mergeSimple(outs)
	}
}

// mergeWithOrDecision: any stop stops, block beats ask beats allow, texts
// are joined with newlines, any suppressOutput or clearContext wins.
func mergeWithOrDecision(outs []hookOutput) hookOutput {
	var (
		stops, reasons, messages, contexts []string
		block, ask, stop                   bool
		decision                           string
		suppress, clearCtx                 bool
		specific                           map[string]any
	)
	for _, o := range outs {
		if o.Continue != nil && !*o.Continue {
			stop = true
			if s := deref(o.StopReason); s != "" {
				stops = append(stops, s)
			}
		}
		switch d := deref(o.Decision); d {
		case DecisionBlock, DecisionDeny:
			block = true
			decision = d
		case DecisionAsk:
			ask = true
			if !block {
				decision = d
			}
		}
		if s := deref(o.Reason); s != "" {
			reasons = append(reasons, s)
		}
		if s := deref(o.SystemMessage); s != "" {
			messages = append(messages, s)
		}
		suppress = suppress || deref(o.SuppressOutput)
		if o.HookSpecificOutput["clearContext"] == true {
			clearCtx = true
		}
		if o.HookSpecificOutput != nil {
			rest := maps.Clone(o.HookSpecificOutput)
			delete(rest, "clearContext")
			specific = mergeSpecific(specific, rest)
		}
		if s, ok := o.HookSpecificOutput["additionalContext"].(string); ok {
			contexts = append(contexts, s)
		}
	}
	m := hookOutput{Continue: ptr(!stop), SuppressOutput: ptr(suppress)}
	if !block && !ask && !stop {
		decision = DecisionAllow
	}
	if decision != "" {
		m.Decision = ptr(decision)
	}
	if len(stops) > 0 {
		m.StopReason = ptr(strings.Join(stops, "\n"))
	}
	if len(reasons) > 0 {
		m.Reason = ptr(strings.Join(reasons, "\n"))
	}
	if len(messages) > 0 {
		m.SystemMessage = ptr(strings.Join(messages, "\n"))
	}
	if clearCtx {
		specific = mergeSpecific(specific, map[string]any{"clearContext": true})
	}
	if len(contexts) > 0 {
		specific = mergeSpecific(specific, map[string]any{"additionalContext": strings.Join(contexts, "\n")})
	}
	m.HookSpecificOutput = specific
	return m
}

// mergeWithFieldReplacement: every field a later hook sets replaces the
// earlier value; hookSpecificOutput is merged key by key.
func mergeWithFieldReplacement(outs []hookOutput) hookOutput {
	var m hookOutput
	for _, o := range outs {
		overrideFields(&m, o)
		if o.HookSpecificOutput != nil {
			m.HookSpecificOutput = mergeSpecific(m.HookSpecificOutput, o.HookSpecificOutput)
		}
	}
	return m
}

// mergeSimple: later fields replace earlier ones, hookSpecificOutput as a
// whole.
func mergeSimple(outs []hookOutput) hookOutput {
	var m hookOutput
	for _, o := range outs {
		overrideFields(&m, o)
		if o.HookSpecificOutput != nil {
			m.HookSpecificOutput = maps.Clone(o.HookSpecificOutput)
		}
	}
	return m
}

func overrideFields(m *hookOutput, o hookOutput) {
	if o.Continue != nil {
		m.Continue = o.Continue
	}
	if o.StopReason != nil {
		m.StopReason = o.StopReason
	}
	if o.SuppressOutput != nil {
		m.SuppressOutput = o.SuppressOutput
	}
	if o.SystemMessage != nil {
		m.SystemMessage = o.SystemMessage
	}
	if o.Decision != nil {
		m.Decision = o.Decision
	}
	if o.Reason != nil {
		m.Reason = o.Reason
	}
}

// mergeToolSelection: NONE beats ANY beats AUTO, and the allowed function
// names are the sorted union of all hooks' lists (NONE allows none). Like
// gemini-cli, nothing but the tool config survives: BeforeToolSelection
// does not support decisions, continue or messages.
func mergeToolSelection(outs []hookOutput) hookOutput {
	var (
		names         []string
		none, anyMode bool
		seen          bool
	)
	for _, o := range outs {
		tc, ok := toolConfigOf(o.HookSpecificOutput)
		if !ok {
			continue
		}
		seen = true
		switch tc.Mode {
		case ModeNone:
			none = true
		case ModeAny:
			anyMode = true
		}
		names = append(names, tc.AllowedFunctionNames...)
	}
	if !seen {
		return hookOutput{}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	tc := map[string]any{"mode": ModeAuto, "allowedFunctionNames": names}
	switch {
	case none:
		tc = map[string]any{"mode": ModeNone, "allowedFunctionNames": []string{}}
	case anyMode:
		tc["mode"] = ModeAny
	}
	return hookOutput{HookSpecificOutput: map[string]any{"hookEventName": string(BeforeToolSelection), "toolConfig": tc}}
}

// toolConfigOf reads hookSpecificOutput.toolConfig, ignoring ill-typed
// parts.
func toolConfigOf(specific map[string]any) (ToolConfig, bool) {
	raw, ok := specific["toolConfig"].(map[string]any)
	if !ok {
		return ToolConfig{}, false
	}
	var tc ToolConfig
	tc.Mode, _ = raw["mode"].(string)
	switch names := raw["allowedFunctionNames"].(type) {
	case []any:
		for _, n := range names {
			if s, ok := n.(string); ok {
				tc.AllowedFunctionNames = append(tc.AllowedFunctionNames, s)
			}
		}
	case []string:
		tc.AllowedFunctionNames = slices.Clone(names)
	}
	return tc, true
}

// mergeSpecific merges src's hookSpecificOutput keys over dst's into a new
// map. tool_input and llm_request are partial overrides of the caller's
// object, so two hooks' overrides are merged key by key rather than the
// later one dropping the earlier one's keys.
func mergeSpecific(dst, src map[string]any) map[string]any {
	out := maps.Clone(dst)
	if out == nil {
		out = make(map[string]any, len(src))
	}
	for k, v := range src {
		if k == "tool_input" || k == "llm_request" {
			old, ok1 := out[k].(map[string]any)
			patch, ok2 := v.(map[string]any)
			if ok1 && ok2 {
				merged := maps.Clone(old)
				maps.Copy(merged, patch)
				out[k] = merged
				continue
			}
		}
		out[k] = v
	}
	return out
}

// escapeContext is gemini-cli's getAdditionalContext sanitising: only < and
// > are escaped (not &), exactly as there.
func escapeContext(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// buildResult turns the merged answer into a Result.
func buildResult(m hookOutput) Result {
	r := Result{
		Continue:       m.Continue == nil || *m.Continue,
		StopReason:     deref(m.StopReason),
		Reason:         deref(m.Reason),
		SystemMessage:  deref(m.SystemMessage),
		SuppressOutput: deref(m.SuppressOutput),
		Decision:       normaliseDecision(deref(m.Decision)),
	}
	s := m.HookSpecificOutput
	if c, ok := s["additionalContext"].(string); ok {
		r.AdditionalContext = escapeContext(c)
	}
	r.ToolInput, _ = s["tool_input"].(map[string]any)
	r.LLMRequest, _ = s["llm_request"].(map[string]any)
	r.LLMResponse, _ = s["llm_response"].(map[string]any)
	if tc, ok := toolConfigOf(s); ok {
		r.ToolConfig = &tc
	}
	r.ClearContext = s["clearContext"] == true
	return r
}

// effectiveReason is gemini-cli's getEffectiveReason.
func effectiveReason(r Result) string {
	if r.StopReason != "" {
		return r.StopReason
	}
	if r.Reason != "" {
		return r.Reason
	}
	return noReason
}

// marshalInput encodes a hook's stdin. A string that is not valid UTF-8 is
// still encoded (with replacement characters) by encoding/json, so the only
// errors are values JSON cannot represent.
func marshalInput(input map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Hook scripts compare strings such as commands; keep <, > and & as they
	// are instead of \u003c escapes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(input); err != nil {
		return nil, fmt.Errorf("hooks: encoding input: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
