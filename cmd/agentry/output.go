package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentry-dev/agentry/internal/ansi"
	"github.com/agentry-dev/agentry/runstats"
	"github.com/agentry-dev/agentry/runtime"
)

// printer writes a run's output in one of the formats: text (the answer on
// stdout), json (one object at the end), stream-json (gemini-cli's JSON
// lines) or events (every protocol event as a JSON line). Warnings and
// errors go to stderr in text mode and into the JSON in the JSON formats.
type printer struct {
	format    string
	io        stdio
	raw       bool
	start     time.Time
	now       func() time.Time
	sessionID string
	metrics   *runstats.Metrics

	lastByte byte // last byte of text written to stdout

	response        string // json: the answer after the last tool call
	preToolResponse string
	warnings        []string

	fatal *runtime.Event // the stream's fatal error event, if any
}

func newPrinter(format string, io stdio, raw bool, start time.Time) *printer {
	return &printer{format: format, io: io, raw: raw, start: start, now: time.Now, metrics: runstats.New()}
}

type jsonError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Code    any    `json:"code,omitempty"`
}

// jsonOutput is gemini-cli's -o json object.
type jsonOutput struct {
	SessionID string            `json:"session_id,omitempty"`
	Response  *string           `json:"response,omitempty"`
	Stats     *runstats.Metrics `json:"stats,omitempty"`
	Error     *jsonError        `json:"error,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
}

// timestamp is the current time in JavaScript's toISOString format.
func (p *printer) timestamp() string { return p.now().UTC().Format("2006-01-02T15:04:05.000Z") }

// The stream-json lines, in gemini-cli's field order.
type (
	initLine struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		SessionID string `json:"session_id"`
		Model     string `json:"model"`
	}
	messageLine struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		Delta     bool   `json:"delta,omitempty"`
	}
	toolUseLine struct {
		Type       string         `json:"type"`
		Timestamp  string         `json:"timestamp"`
		ToolName   string         `json:"tool_name"`
		ToolID     string         `json:"tool_id"`
		Parameters map[string]any `json:"parameters"`
	}
	typedError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	toolResultLine struct {
		Type      string      `json:"type"`
		Timestamp string      `json:"timestamp"`
		ToolID    string      `json:"tool_id"`
		Status    string      `json:"status"`
		Output    string      `json:"output"` // present when empty, as gemini-cli's
		Error     *typedError `json:"error,omitempty"`
	}
	errorLine struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Severity  string `json:"severity"`
		Message   string `json:"message"`
	}
	resultLine struct {
		Type      string               `json:"type"`
		Timestamp string               `json:"timestamp"`
		Status    string               `json:"status"`
		Error     *typedError          `json:"error,omitempty"`
		Stats     runstats.StreamStats `json:"stats"`
	}
)

// line writes one JSON line. Like gemini-cli's JSON.stringify, it leaves
// <, > and & unescaped.
func (p *printer) line(v any) {
	enc := json.NewEncoder(p.io.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(p.io.err, "agentry: cannot encode output: %v\n", err)
	}
}

// init starts stream-json output with its init and user message lines.
func (p *printer) init(model, input string) {
	if p.format != "stream-json" {
		return
	}
	p.line(initLine{Type: "init", Timestamp: p.timestamp(), SessionID: p.sessionID, Model: model})
	p.line(messageLine{Type: "message", Timestamp: p.timestamp(), Role: "user", Content: input})
}

// warn reports a non-fatal problem.
func (p *printer) warn(msg string) {
	switch p.format {
	case "stream-json":
		p.line(errorLine{Type: "error", Timestamp: p.timestamp(), Severity: "warning", Message: stripANSI(msg)})
	case "json":
		p.warnings = append(p.warnings, stripANSI(msg))
	default:
		fmt.Fprintf(p.io.err, "[WARNING] %s\n", msg)
	}
}

// event handles one protocol event; done reports the stream's end with the
// process exit code.
func (p *printer) event(ev runtime.Event) (exitCode int, done bool) {
	p.metrics.Observe(ev)
	if p.format == "events" {
		p.line(ev)
	}
	switch ev.Type {
	case runtime.EventMessage:
		if ev.Message.Role == runtime.RoleAgent {
			for _, part := range ev.Message.Content {
				if part.Type == runtime.PartText {
					p.text(part.Text)
				}
			}
		}
	case runtime.EventToolRequest:
		p.preToolResponse = firstNonEmpty(p.response, p.preToolResponse)
		p.response = ""
		if p.format == "stream-json" {
			r := ev.ToolRequest
			p.line(toolUseLine{Type: "tool_use", Timestamp: p.timestamp(), ToolName: r.Name, ToolID: r.RequestID, Parameters: r.Args})
		}
	case runtime.EventToolResponse:
		p.toolResponse(ev.ToolResponse)
	case runtime.EventError:
		if ev.Error.Fatal {
			e := ev
			p.fatal = &e
			return 0, false
		}
		if p.format == "stream-json" {
			severity := "warning"
			if ev.Error.Status == "RESOURCE_EXHAUSTED" {
				severity = "error"
			}
			p.line(errorLine{Type: "error", Timestamp: p.timestamp(), Severity: severity, Message: stripANSI(ev.Error.Message)})
		} else if p.format == "json" {
			p.warnings = append(p.warnings, ev.Error.Message)
		} else if p.format == "text" {
			fmt.Fprintf(p.io.err, "[WARNING] %s\n", ev.Error.Message)
		}
	case runtime.EventCustom:
		// A fallback changes the model the run's answers come from: every
		// format shows it, as gemini-cli shows its fallback message.
		switch ev.Custom.Kind {
		case runtime.CustomModelRetry:
			// gemini-cli's notice, one line per retry, on stderr in every
			// format: stdout carries only the answer or its JSON.
			if msg, ok := ev.Custom.Data["message"].(string); ok {
				fmt.Fprintln(p.io.err, msg)
			}
		case runtime.CustomModelFallback:
			if msg, ok := ev.Custom.Data["message"].(string); ok {
				p.warn(msg)
			}
		case runtime.CustomChatCompressed:
			// gemini-cli's interactive notice; the machine formats keep
			// gemini-cli's shape, which has no compression line (the
			// events format carries the event).
			if p.format == "text" {
				fmt.Fprintf(p.io.err, "[INFO] Chat history compressed from %v to %v tokens.\n",
					ev.Custom.Data["originalTokenCount"], ev.Custom.Data["newTokenCount"])
			}
		}
	case runtime.EventAgentEnd:
		return p.end(ev.AgentEnd), true
	}
	return 0, false
}

func (p *printer) text(t string) {
	if !p.raw {
		t = stripANSI(t)
	}
	switch p.format {
	case "text":
		if t != "" {
			io.WriteString(p.io.out, t)
			p.lastByte = t[len(t)-1]
		}
	case "json":
		p.response += t
	case "stream-json":
		p.line(messageLine{Type: "message", Timestamp: p.timestamp(), Role: "assistant", Content: t, Delta: true})
	}
}

func (p *printer) ensureNewline() {
	if p.format == "text" && p.lastByte != 0 && p.lastByte != '\n' {
		io.WriteString(p.io.out, "\n")
		p.lastByte = '\n'
	}
}

func (p *printer) toolResponse(r *runtime.ToolResponse) {
	p.ensureNewline()
	msg := contentText(r.Content)
	errType, _ := r.Data["errorType"].(string)
	// gemini-cli's resultDisplay: what the tool shows of its result; for a
	// failed call its own summary, else its error.
	display := displayString(r.Display)
	switch p.format {
	case "stream-json":
		out := toolResultLine{Type: "tool_result", Timestamp: p.timestamp(), ToolID: r.RequestID, Status: "success", Output: display}
		if r.IsError {
			if out.Output == "" {
				out.Output = msg
			}
			out.Status = "error"
			if errType == "" {
				errType = "TOOL_EXECUTION_ERROR"
			}
			if msg == "" {
				msg = "Tool error"
			}
			out.Error = &typedError{Type: errType, Message: msg}
		}
		p.line(out)
	case "text":
		if r.IsError {
			fmt.Fprintf(p.io.err, "[WARNING] Error executing tool %s: %s\n", r.Name, firstNonEmpty(display, msg))
		}
	}
}

// end writes the final output for a stream that ended and returns the exit
// code.
func (p *printer) end(end *runtime.AgentEnd) int {
	switch end.Reason {
	case runtime.EndAborted:
		return p.failWith(runtime.ExitCancelled, "FatalCancellationError", runtime.CancelledMessage)
	case runtime.EndMaxTurns:
		return p.failWith(runtime.ExitTurnLimit, "FatalTurnLimitedError", runtime.TurnLimitMessage)
	case runtime.EndFailed:
		if p.fatal != nil {
			code := metaInt(p.fatal.Meta, "exitCode")
			if code == 0 {
				code = runtime.ExitGeneric
			}
			if c, _ := p.fatal.Meta["code"].(string); c == "INVALID_STREAM" {
				return p.invalidStream(code, p.fatal)
			}
			name, _ := p.fatal.Meta["errorName"].(string)
			return p.failWith(code, firstNonEmpty(name, "Error"), p.fatal.Error.Message)
		}
		return p.failWith(runtime.ExitGeneric, "Error", "the agent stopped because of a failure")
	}
	switch p.format {
	case "text":
		p.ensureNewline()
	case "json":
		resp := p.response
		p.writeJSON(jsonOutput{SessionID: p.sessionID, Response: &resp, Stats: p.metrics, Warnings: p.warnings})
	case "stream-json":
		p.line(resultLine{Type: "result", Timestamp: p.timestamp(), Status: "success", Stats: p.metrics.StreamStats(p.elapsed())})
	}
	return runtime.ExitOK
}

// invalidStreamMessages are gemini-cli's words for a stream that stayed
// invalid (nonInteractiveCli.ts), by kind.
var invalidStreamMessages = map[string]string{
	"NO_RESPONSE_TEXT":       "The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.",
	"THINKING_ONLY_RESPONSE": "The model returned reasoning thoughts but no final response text. If your context window is near capacity, try using /compress.",
	"MAX_TOKENS_EXCEEDED":    "Model response was truncated because it exceeded the token limit. Try using /compress to free up context space.",
	"SAFETY_BLOCKED":         "The model response was blocked due to safety settings.",
	"RECITATION_BLOCKED":     "The model response was blocked due to recitation/copyright filters.",
	"OTHER_BLOCKED":          "The model response was blocked due to other policy settings.",
}

// invalidStream ends a run whose model stream stayed invalid as gemini-cli
// reports it: "[ERROR] …" on stderr in text, an error line before the
// result in stream-json, error type INVALID_STREAM in json. gemini-cli
// exits 0 there; agentry exits with the failure's code, as for any failed
// run.
func (p *printer) invalidStream(code int, ev *runtime.Event) int {
	kind, _ := ev.Meta["errorType"].(string)
	msg := firstNonEmpty(invalidStreamMessages[kind], strings.TrimSpace(ev.Error.Message))
	switch p.format {
	case "text":
		p.ensureNewline()
		fmt.Fprintf(p.io.err, "[ERROR] %s\n", msg)
		return code
	case "stream-json":
		p.line(errorLine{Type: "error", Timestamp: p.timestamp(), Severity: "error", Message: msg})
	}
	return p.failWith(code, "INVALID_STREAM", msg)
}

func (p *printer) elapsed() int64 { return p.now().Sub(p.start).Milliseconds() }

// fail reports an error that ended the run outside a stream's events.
func (p *printer) fail(err error) int {
	code, name := exitFor(err)
	return p.failWith(code, name, err.Error())
}

func (p *printer) failWith(code int, errType, msg string) int {
	switch p.format {
	case "json":
		p.writeJSON(jsonOutput{SessionID: p.sessionID, Stats: p.metrics, Warnings: p.warnings,
			Error: &jsonError{Type: errType, Message: stripANSI(msg), Code: code}})
	case "stream-json":
		p.line(resultLine{Type: "result", Timestamp: p.timestamp(), Status: "error",
			Error: &typedError{Type: errType, Message: stripANSI(msg)}, Stats: p.metrics.StreamStats(p.elapsed())})
	case "text":
		p.ensureNewline()
		writeErrorLine(p.io.err, errors.New(msg))
	}
	return code
}

func (p *printer) writeJSON(v jsonOutput) {
	enc := json.NewEncoder(p.io.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(p.io.err, "agentry: cannot encode output: %v\n", err)
	}
}

func writeErrorLine(w io.Writer, err error) {
	fmt.Fprintf(w, "Error: %v\n", err)
}

func contentText(parts []runtime.ContentPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == runtime.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// displayString renders a tool's display result as gemini-cli's
// displayContentToString does: text as is, a diff as a unified patch.
func displayString(d *runtime.ToolDisplay) string {
	if d == nil || d.Result == nil {
		return ""
	}
	switch r := d.Result; r.Type {
	case "text":
		return r.Text
	case "diff":
		return udiff.Unified("Original", "Modified", r.BeforeText, r.AfterText)
	default:
		b, _ := json.Marshal(r)
		return string(b)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stripANSI removes terminal escape sequences from the model's text unless
// --raw-output, so a reply cannot rewrite the user's terminal.
func stripANSI(s string) string { return ansi.Strip(s) }

// metaInt reads a number from decoded or in-memory metadata.
func metaInt(m map[string]any, key string) int {
	switch v := m[key].(type) {
	case int:
		return v
	case int32:
		return int(v)
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}
