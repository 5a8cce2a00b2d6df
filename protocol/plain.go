package protocol

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// answerArtifact names the artifact that carries a plain task's answer.
const answerArtifact = "answer"

// maxQuestionDiff bounds the diff a plain approval question shows: the
// whole edit is in the call, the question is for a human to read.
const maxQuestionDiff = 8 << 10

// plainTranslator turns one task's runtime events into plain A2A, for a
// client that did not activate the development-tool extension: status
// updates without metadata whose messages are text (a tool call starting
// or failing, a warning, the approval question, the reason a task
// failed), and the answer as one artifact streamed in chunks (the first
// replaces, the rest append), closed by a last chunk before the terminal
// status. Thoughts and tool output stay out. It is used by one goroutine
// at a time.
type plainTranslator struct {
	info a2a.TaskInfo
	now  func() time.Time
	// at, when set, stamps the updates being built (see translator.at).
	at time.Time

	// calls holds the name and description of each call in flight.
	calls map[string]plainCall
	// artifact is the answer's id once its first text went out.
	artifact a2a.ArtifactID
	// gap: something other than answer text came since the last text, so
	// the next text starts a new paragraph (the model's next response).
	gap bool
	// lastError is the message of the last error event, for a failed end.
	lastError string
}

// plainCall is what a status message names of a call.
type plainCall struct{ name, description string }

func newPlainTranslator(info a2a.TaskInfo, now func() time.Time) *plainTranslator {
	return &plainTranslator{info: info, now: now, calls: map[string]plainCall{}}
}

// status is a status update whose message, unless text is empty, is text.
func (p *plainTranslator) status(state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
	ts := p.at
	if ts.IsZero() {
		ts = p.now()
	}
	u := &a2a.TaskStatusUpdateEvent{TaskID: p.info.TaskID, ContextID: p.info.ContextID,
		Status: a2a.TaskStatus{State: state, Timestamp: &ts}}
	if text != "" {
		u.Status.Message = &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent,
			Parts: a2a.ContentParts{a2a.NewTextPart(text)}, TaskID: p.info.TaskID, ContextID: p.info.ContextID}
	}
	return u
}

// note is a working update telling what happened: one line, ending in a
// newline, since clients such as gemini-cli join status texts as they are.
func (p *plainTranslator) note(text string) *a2a.TaskStatusUpdateEvent {
	return p.status(a2a.TaskStateWorking, text+"\n")
}

// chunk is the next piece of the answer.
func (p *plainTranslator) chunk(text string) *a2a.TaskArtifactUpdateEvent {
	if p.gap && p.artifact != "" {
		text = "\n\n" + text
	}
	p.gap = false
	ev := &a2a.TaskArtifactUpdateEvent{TaskID: p.info.TaskID, ContextID: p.info.ContextID,
		Artifact: &a2a.Artifact{ID: p.artifact, Name: answerArtifact, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}}
	if p.artifact == "" {
		p.artifact = a2a.NewArtifactID()
		ev.Artifact.ID = p.artifact
	} else {
		ev.Append = true
	}
	return ev
}

// close is the answer's last chunk, nil when there was no answer. It adds
// no text: a chunk is sent as soon as the model writes it, before anyone
// knows it is the last.
func (p *plainTranslator) close() *a2a.TaskArtifactUpdateEvent {
	if p.artifact == "" {
		return nil
	}
	return &a2a.TaskArtifactUpdateEvent{TaskID: p.info.TaskID, ContextID: p.info.ContextID, Append: true, LastChunk: true,
		Artifact: &a2a.Artifact{ID: p.artifact, Name: answerArtifact, Parts: a2a.ContentParts{a2a.NewTextPart("")}}}
}

// event translates one runtime event; text deltas are merged by the
// caller. The result may be empty.
func (p *plainTranslator) event(ev runtime.Event, denied map[string]bool) []a2a.Event {
	switch ev.Type {
	case runtime.EventMessage:
		if ev.Message.Role != runtime.RoleAgent {
			return nil
		}
		var text strings.Builder
		for _, part := range ev.Message.Content {
			if part.Type == runtime.PartText {
				text.WriteString(part.Text)
			}
		}
		if text.Len() == 0 {
			return nil // thoughts only
		}
		return []a2a.Event{p.chunk(text.String())}
	case runtime.EventToolRequest:
		r := ev.ToolRequest
		c := plainCall{name: r.Name}
		if r.Display != nil {
			c.description = r.Display.Description
		}
		p.calls[r.RequestID] = c
		p.gap = true
	case runtime.EventToolResponse:
		return p.toolResponse(ev.ToolResponse, denied)
	case runtime.EventError:
		p.lastError = ev.Error.Message
		if !ev.Error.Fatal {
			return []a2a.Event{p.note("Warning: " + ev.Error.Message)}
		}
	}
	return nil
}

// executing notes a call starting.
func (p *plainTranslator) executing(callID string) []a2a.Event {
	c, ok := p.calls[callID]
	if !ok {
		return nil
	}
	p.gap = true
	if c.description == "" {
		return []a2a.Event{p.note("Running " + c.name)}
	}
	return []a2a.Event{p.note(fmt.Sprintf("Running %s: %s", c.name, oneLine(c.description)))}
}

// toolResponse notes a call that failed or was not run; a success says
// nothing (the answer tells what came of it).
func (p *plainTranslator) toolResponse(r *runtime.ToolResponse, denied map[string]bool) []a2a.Event {
	c, ok := p.calls[r.RequestID]
	delete(p.calls, r.RequestID)
	if !ok {
		c = plainCall{name: r.Name}
	}
	p.gap = true
	if !r.IsError {
		return nil
	}
	var text strings.Builder
	for _, part := range r.Content {
		if part.Type == runtime.PartText {
			text.WriteString(part.Text)
		}
	}
	errType, _ := r.Data["errorType"].(string)
	if denied[r.RequestID] || errType == string(tools.ErrCancelled) || errType == string(tools.ErrPolicyViolation) {
		return []a2a.Event{p.note(fmt.Sprintf("%s was not run: %s", c.name, oneLine(text.String())))}
	}
	return []a2a.Event{p.note(fmt.Sprintf("%s failed: %s", c.name, oneLine(text.String())))}
}

// oneLine folds s into one line for a note.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// question is the text of a plain approval: what the call would do, and
// the replies that answer it.
func question(req runtime.ApprovalRequest, workDir string) string {
	cr := confirmationRequest(req, workDir)
	name := req.Tool
	if agent, _, ok := strings.Cut(req.DisplayName, " › "); ok {
		name = agent + " › " + req.Tool
	}
	var b strings.Builder
	switch {
	case cr.ExecuteDetails != nil:
		fmt.Fprintf(&b, "Allow %s? It would run this command in %s:\n\n", name, cr.ExecuteDetails.WorkingDirectory)
		for _, line := range strings.Split(cr.ExecuteDetails.Command, "\n") {
			b.WriteString("    " + line + "\n")
		}
	case cr.FileEditDetails != nil:
		fd := cr.FileEditDetails
		verb := "change"
		if fd.OldContent == nil {
			verb = "create"
		}
		fmt.Fprintf(&b, "Allow %s? It would %s %s:\n\n", name, verb, fd.FilePath)
		diff := fd.FormattedDiff
		if len(diff) > maxQuestionDiff {
			cut := maxQuestionDiff
			for cut > 0 && !utf8.RuneStart(diff[cut]) {
				cut--
			}
			diff = diff[:cut] + "\n… (the rest of the diff is left out)\n"
		}
		b.WriteString(diff)
	case cr.McpDetails != nil:
		fmt.Fprintf(&b, "Allow %s (tool %s of MCP server %s)?", name, cr.McpDetails.ToolName, cr.McpDetails.ServerName)
		writeArgs(&b, req.Args)
	default:
		fmt.Fprintf(&b, "Allow %s?", name)
		if d := cr.GenericDetails.Description; d != "" && d != req.Tool {
			b.WriteString(" " + oneLine(d))
		}
		writeArgs(&b, req.Args)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	i := slices.IndexFunc(cr.Options, func(o devtool.ConfirmationOption) bool { return o.ID == devtool.OptionProceedAlways })
	if i < 0 {
		// No "always" answer is offered (security.disableAlwaysAllow,
		// an untrusted workspace).
		b.WriteString("\nReply yes to allow it once, or no to decline.\n")
		return b.String()
	}
	always := "allow it for the rest of the session"
	if d := cr.Options[i].Description; d != "" {
		always = lowerFirst(d)
	}
	fmt.Fprintf(&b, "\nReply yes to allow it once, always to %s, or no to decline.\n", always)
	return b.String()
}

// writeArgs appends a call's arguments as JSON.
func writeArgs(b *strings.Builder, args map[string]any) {
	if len(args) == 0 {
		return
	}
	j, err := json.Marshal(args)
	if err != nil {
		return
	}
	b.WriteString("\nArguments: ")
	b.Write(j)
	b.WriteString("\n")
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// replyWords names the replies to a plain approval question.
const replyWords = "yes (or y) to allow it once, always to allow it for the rest of the session, or no (or n) to decline"

// replyOutcome reads a plain reply to an approval question: the message's
// text, trimmed and in any case, must be one of the documented words.
func replyOutcome(m *a2a.Message) (runtime.Outcome, bool) {
	var text strings.Builder
	for _, p := range m.Parts {
		t, ok := p.Content.(a2a.Text)
		if !ok {
			return "", false
		}
		text.WriteString(string(t))
	}
	switch strings.ToLower(strings.TrimSpace(text.String())) {
	case "yes", "y":
		return runtime.ProceedOnce, true
	case "always":
		return runtime.ProceedAlways, true
	case "no", "n":
		return runtime.Cancel, true
	}
	return "", false
}
