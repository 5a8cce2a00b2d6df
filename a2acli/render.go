package a2acli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/ansi"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// maxLine bounds a progress line's detail (a command, a description).
const maxLine = 160

// output renders a run: every event received, the command's own warnings
// and the summary at the end.
type output interface {
	event(ev a2a.Event)
	warn(msg string)
	note(msg string)
	// breakLine ends the answer's open line before a question.
	breakLine()
	// connected says which agent was reached, and how.
	connected(agent, where string)
	// catchUp shows what the task said after the last user message, from
	// its history: a task answered elsewhere and read once it had ended.
	catchUp(task *a2a.Task)
	end(o Outcome, reason, url string)
}

// jsonOutput writes every event as one line of A2A 1.0 JSON, a2a-go's
// encoding of a StreamResponse ({"task": …}, {"statusUpdate": …}, …), and
// nothing else; warnings go to the error stream.
type jsonOutput struct {
	out, err io.Writer
}

func (j *jsonOutput) event(ev a2a.Event) {
	b, err := json.Marshal(a2a.StreamResponse{Event: ev})
	if err != nil {
		fmt.Fprintf(j.err, "agentry a2a: cannot encode an event: %v\n", err)
		return
	}
	j.out.Write(append(b, '\n'))
}

func (j *jsonOutput) warn(msg string) { fmt.Fprintf(j.err, "Warning: %s\n", msg) }

func (j *jsonOutput) note(msg string) { fmt.Fprintln(j.err, msg) }

func (j *jsonOutput) breakLine() {}

func (j *jsonOutput) connected(string, string) {}

// catchUp writes nothing: the task's line that follows holds its history.
func (j *jsonOutput) catchUp(*a2a.Task) {}

func (j *jsonOutput) end(Outcome, string, string) {}

// textOutput writes the agent's answer to out as it streams, and its
// progress — thoughts, tool calls, warnings — to err, one line each,
// dimmed when dim is set; the summary ends err. Every text from the agent
// is stripped of terminal escape sequences.
type textOutput struct {
	out, err io.Writer
	dim      bool
	// lastOut is the last byte written to out, 0 before any.
	lastOut byte
	// broke is set when newline ended the answer's line: the answer's own
	// line break, if it comes next, is not doubled.
	broke bool
	// shown is each tool call's last status shown.
	shown map[string]devtool.Status
}

func newTextOutput(out, err io.Writer, dim bool) *textOutput {
	return &textOutput{out: out, err: err, dim: dim, shown: map[string]devtool.Status{}}
}

// answer writes the agent's answer text.
func (t *textOutput) answer(s string) {
	s = ansi.Strip(s)
	switch {
	case t.lastOut == 0:
		// The answer's first line is not blank.
		s = strings.TrimLeft(s, "\n")
	case t.broke && strings.HasPrefix(s, "\n"):
		s = s[1:]
	}
	if s == "" {
		return
	}
	t.broke = false
	io.WriteString(t.out, s)
	t.lastOut = s[len(s)-1]
}

// newline ends the answer's open line, so that progress on a terminal
// starts on its own line.
func (t *textOutput) newline() {
	if t.lastOut != 0 && t.lastOut != '\n' {
		io.WriteString(t.out, "\n")
		t.lastOut, t.broke = '\n', true
	}
}

// progress writes one line of progress, dimmed.
func (t *textOutput) progress(s string) {
	t.newline()
	if t.dim {
		fmt.Fprintf(t.err, "\x1b[2m%s\x1b[0m\n", s)
		return
	}
	fmt.Fprintln(t.err, s)
}

// say writes lines of the command's own, never dimmed.
func (t *textOutput) say(s string) {
	t.newline()
	fmt.Fprintln(t.err, s)
}

func (t *textOutput) warn(msg string) { t.say("Warning: " + msg) }

func (t *textOutput) note(msg string) { t.say(msg) }

func (t *textOutput) breakLine() { t.newline() }

func (t *textOutput) catchUp(task *a2a.Task) {
	last := -1
	for i, m := range task.History {
		if m != nil && m.Role == a2a.MessageRoleUser {
			last = i
		}
	}
	for _, m := range task.History[last+1:] {
		if m != nil {
			t.answer(partsText(m.Parts))
		}
	}
}

func (t *textOutput) connected(agent, where string) {
	if agent = oneLine(agent); agent == "" {
		agent = "the agent"
	}
	t.progress(fmt.Sprintf("%s over %s", agent, oneLine(where)))
}

func (t *textOutput) event(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Task:
		// A snapshot (the task a message started, or the one a reattach
		// follows): its artifacts so far are the answer so far.
		for _, a := range e.Artifacts {
			if a != nil {
				t.answer(partsText(a.Parts))
			}
		}
		if e.Status.State == a2a.TaskStateCompleted && e.Status.Message != nil {
			t.answer(partsText(e.Status.Message.Parts))
		}
	case *a2a.Message:
		if e.Role != a2a.MessageRoleUser {
			t.answer(partsText(e.Parts))
		}
	case *a2a.TaskArtifactUpdateEvent:
		if e.Artifact != nil {
			t.answer(partsText(e.Artifact.Parts))
		}
	case *a2a.TaskStatusUpdateEvent:
		t.status(e)
	}
}

// status renders a status update: the development-tool extension's kinds,
// or a plain agent's status message.
func (t *textOutput) status(e *a2a.TaskStatusUpdateEvent) {
	var parts a2a.ContentParts
	if e.Status.Message != nil {
		parts = e.Status.Message.Parts
	}
	if dev, ok := devtool.EventFrom(e.Metadata); ok {
		switch dev.Kind {
		case devtool.KindTextContent:
			t.answer(partsText(parts))
		case devtool.KindThought:
			for _, p := range parts {
				if d, ok := p.Content.(a2a.Data); ok {
					if th, err := devtool.ThoughtFrom(d.Value); err == nil {
						t.thought(th)
					}
				}
			}
		case devtool.KindToolCallUpdate:
			for _, p := range parts {
				if d, ok := p.Content.(a2a.Data); ok {
					if tc, err := devtool.ToolCallFrom(d.Value); err == nil {
						t.toolCall(tc)
					}
				}
			}
		case devtool.KindStateChange:
			if dev.Error != "" && !e.Status.State.Terminal() {
				t.warn(oneLine(dev.Error))
			}
		}
		return
	}
	text := partsText(parts)
	switch {
	case text == "":
	case e.Status.State == a2a.TaskStateCompleted:
		t.answer(text)
	case e.Status.State.Terminal(), e.Status.State == a2a.TaskStateInputRequired, e.Status.State == a2a.TaskStateAuthRequired:
		// The reason of the end, or the question: the summary and the
		// question show them.
	default:
		t.progress(oneLine(text))
	}
}

func (t *textOutput) thought(th devtool.AgentThought) {
	s := strings.TrimSpace(th.Subject)
	if s == "" {
		s = strings.TrimSpace(th.Description)
	}
	if s = oneLine(s); s != "" {
		t.progress("Thinking: " + s)
	}
}

// toolCall shows a call's progress once per status: running (with what
// it runs), done, failed or cancelled. A call waiting for approval is
// shown by the question.
func (t *textOutput) toolCall(tc devtool.ToolCall) {
	if t.shown[tc.ToolCallID] == tc.Status {
		return
	}
	t.shown[tc.ToolCallID] = tc.Status
	name := oneLine(tc.ToolName)
	switch tc.Status {
	case devtool.StatusExecuting:
		if d := callDetail(tc); d != "" {
			t.progress(fmt.Sprintf("▸ %s: %s", name, d))
		} else {
			t.progress("▸ " + name)
		}
	case devtool.StatusSucceeded:
		t.progress("✓ " + name)
	case devtool.StatusFailed:
		msg := "failed"
		if tc.Error != nil && tc.Error.Message != "" {
			msg = "failed: " + oneLine(tc.Error.Message)
		}
		t.progress(fmt.Sprintf("✗ %s %s", name, msg))
	case devtool.StatusCancelled:
		t.progress(fmt.Sprintf("✗ %s cancelled", name))
	}
}

// end writes where the task is and how to go on with it.
func (t *textOutput) end(o Outcome, reason, url string) {
	ids := ""
	if o.ContextID != "" {
		ids = " (context " + o.ContextID
		if o.TaskID != "" {
			ids += ", task " + string(o.TaskID)
		}
		ids += ")"
	} else if o.TaskID != "" {
		ids = " (task " + string(o.TaskID) + ")"
	}
	switch o.State {
	case a2a.TaskStateCompleted:
		t.say("Task completed" + ids + ".")
	case a2a.TaskStateInputRequired:
		t.say("The task waits for input" + ids + ".")
		if o.TaskID != "" {
			t.say(fmt.Sprintf("Answer it with: agentry a2a --task %s %s ANSWER", o.TaskID, url))
		}
		return
	case a2a.TaskStateAuthRequired:
		t.say("The task waits for authentication" + ids + ".")
		return
	case "":
		return
	default:
		msg := "Task " + stateName(o.State) + ids
		if reason != "" {
			msg += ": " + oneLine(reason)
		}
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
		t.say(msg)
	}
	if o.ContextID != "" {
		t.say(fmt.Sprintf("Continue the conversation with: agentry a2a --context %s %s PROMPT", o.ContextID, url))
	}
}

// callDetail is what a call does, in a line: its description, or the
// command, file or path among its arguments.
func callDetail(tc devtool.ToolCall) string {
	if tc.Description != "" {
		return trim(oneLine(tc.Description))
	}
	for _, k := range []string{"command", "file_path", "absolute_path", "path", "dir_path", "pattern"} {
		if s, ok := tc.InputParameters[k].(string); ok && s != "" {
			return trim(oneLine(s))
		}
	}
	return ""
}

// partsText is the text of parts; data and files are left out.
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if p == nil {
			continue
		}
		if s, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(s))
		}
	}
	return b.String()
}

// oneLine makes s one inert line.
func oneLine(s string) string {
	s = ansi.DropControls(ansi.Strip(s))
	return strings.Join(strings.Fields(s), " ")
}

// trim bounds a detail's length.
func trim(s string) string {
	if r := []rune(s); len(r) > maxLine {
		return string(r[:maxLine-1]) + "…"
	}
	return s
}

// stateName is a task state as users read it: "completed", "input
// required".
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", " ")
}
