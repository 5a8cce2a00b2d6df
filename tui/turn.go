package tui

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentry-dev/agentry/runtime"
)

// turn is a prompt being answered: the terminal's own, or a remote one
// (a Turn another client started), whose stream it only follows.
type turn struct {
	id      int
	cancel  context.CancelFunc // ends the @path expansion and the Send
	aborted bool
	remote  bool
}

// remoteTurnMsg brings a Turn from Config.Turns.
type remoteTurnMsg struct{ t Turn }

// streamEventMsg carries one event of a turn's stream.
type streamEventMsg struct {
	turn int
	ev   runtime.Event
}

// turnDoneMsg ends a turn: its stream ended, or err stopped it first.
type turnDoneMsg struct {
	turn int
	err  error
}

// queuedPrompt is a prompt submitted while another turn ran.
type queuedPrompt struct {
	typed, full string
	// content, when set, is what is sent in place of full expanded (a
	// command's submitted prompt); printed says the typed line is shown.
	content []runtime.ContentPart
	printed bool
}

// Bounds of what a tool shows.
const (
	liveOutputLines  = 8  // a running tool's output box
	finalOutputLines = 10 // a finished tool's output in the scrollback
	scrollDiffLines  = 60 // an edit's diff in the scrollback
	maxThought       = 64 << 10
)

// toolStatus is the state of a tool call.
type toolStatus int

const (
	toolPending toolStatus = iota
	toolRunning
)

// toolView is a tool call in the live region.
type toolView struct {
	id, name, desc string
	status         toolStatus
	out            termBuf
	hasOut         bool
}

// streamState is what the live region shows of a turn's stream.
type streamState struct {
	split       blockSplitter
	printedText bool // a block of the current answer was printed
	answer      strings.Builder
	answerReset bool // a tool call ended the answer: the next text starts anew
	thought     strings.Builder
	thinking    bool
	tools       []*toolView
	byID        map[string]*toolView
	executed    map[string]bool // Executing reported before the tool_request
	ended       bool
}

func (s *streamState) reset() {
	*s = streamState{byID: map[string]*toolView{}, executed: map[string]bool{}}
}

// executing marks a call as running.
func (s *streamState) executing(callID string) {
	if tv := s.byID[callID]; tv != nil {
		tv.status = toolRunning
		return
	}
	if s.executed != nil {
		s.executed[callID] = true
	}
}

// prompt sends a prompt to the model, or queues it while something runs
// or remote turns wait: those were sent to the session first.
func (m *model) prompt(typed, full string) tea.Cmd {
	return m.send(queuedPrompt{typed: typed, full: full})
}

// send sends a prompt, or queues it as prompt does.
func (m *model) send(q queuedPrompt) tea.Cmd {
	typed, full := q.typed, q.full
	if m.busy() || len(m.remote) > 0 {
		m.queued = append(m.queued, q)
		return nil
	}
	if !q.printed {
		m.printUser(typed)
	}
	m.nextID++
	ctx, cancel := context.WithCancel(m.ctx)
	t := &turn{id: m.nextID, cancel: cancel}
	m.turn = t
	m.stream.reset()

	var parts []runtime.ContentPart
	for _, h := range m.shellHistory {
		parts = append(parts, runtime.TextPart(h))
	}
	m.shellHistory = nil
	session, expand, mb, streamCtx := m.session, m.cfg.Expand, m.mb, m.ctx
	id := t.id
	run := func() tea.Msg {
		defer cancel()
		send := runtime.Send{Message: &runtime.SendMessage{}}
		switch {
		case q.content != nil:
			// A prompt's messages (an MCP prompt): sent as they are,
			// shown as typed.
			send.Message.Content = append(parts, q.content...)
			send.Message.DisplayContent = full
		case expand != nil:
			p, err := expand(ctx, full)
			if err != nil {
				mb.push(turnDoneMsg{id, fmt.Errorf("Exiting due to an error processing the @ command: %w", err)})
				return nil
			}
			send.Message.Content = append(parts, p...)
			send.Message.DisplayContent = full
		default:
			send.Message.Content = append(parts, runtime.TextPart(full))
			if len(send.Message.Content) > 1 {
				send.Message.DisplayContent = full
			}
		}
		streamID, err := session.Send(ctx, send)
		if err != nil {
			mb.push(turnDoneMsg{id, err})
			return nil
		}
		if ctx.Err() != nil {
			// Cancelled while Send queued the stream: stop it.
			session.Abort(runtime.ErrAborted)
		}
		follow(streamCtx, session, mb, id, streamID)
		return nil
	}
	return tea.Batch(run, m.startWork())
}

// follow pushes the events of stream streamID as turn id's, then the
// turn's end. It follows the stream to its agent_end even after Esc, so
// that what the cancelled turn did is shown; ctx is the program's.
func follow(ctx context.Context, session Session, mb *mailbox, id int, streamID string) {
	for ev, err := range session.Stream(ctx, streamID) {
		if err != nil {
			mb.push(turnDoneMsg{id, err})
			return
		}
		mb.push(streamEventMsg{id, ev})
	}
	mb.push(turnDoneMsg{id, nil})
}

// forwardTurns hands the program each turn of ch until ctx ends or ch is
// closed; the channel it returns is closed once it stopped reading ch.
func forwardTurns(ctx context.Context, ch <-chan Turn, mb *mailbox) <-chan struct{} {
	done := make(chan struct{})
	if ch == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case t, ok := <-ch:
				if !ok {
					return
				}
				mb.push(remoteTurnMsg{t})
			}
		}
	}()
	return done
}

// remoteTurn shows a turn another client started, or keeps it for when
// the work under way ends.
func (m *model) remoteTurn(t Turn) tea.Cmd {
	if m.busy() || m.command != nil || len(m.remote) > 0 {
		m.remote = append(m.remote, t)
		return nil
	}
	return m.followRemote(t)
}

// followRemote prints a remote turn's prompt and follows its stream as
// an own turn's.
func (m *model) followRemote(t Turn) tea.Cmd {
	m.printPrompt(originOf(t), t.Text)
	m.nextID++
	m.turn = &turn{id: m.nextID, cancel: func() {}, remote: true}
	m.stream.reset()
	ctx, session, mb, id, streamID := m.ctx, m.session, m.mb, m.nextID, t.StreamID
	run := func() tea.Msg {
		follow(ctx, session, mb, id, streamID)
		return nil
	}
	return tea.Batch(run, m.startWork())
}

// originOf is the origin a remote turn is shown with, safe to print on
// one line; a turn that names none is still marked as not typed here.
func originOf(t Turn) string {
	if o := oneLine(sanitize(t.Origin)); o != "" {
		return o
	}
	return "remote"
}

// printUser prints a submitted prompt into the scrollback.
func (m *model) printUser(text string) { m.printPrompt("", text) }

// printPrompt prints a prompt into the scrollback; a remote turn's starts
// with its origin (sanitized, one line) as "[origin]", so that it is not
// taken for one typed here.
func (m *model) printPrompt(origin, text string) {
	w := m.contentWidth() - 2
	text = sanitize(text)
	tag := ""
	if origin != "" {
		// A tag shorter than a line stays whole on the first one.
		tag = "[" + truncate(origin, max(w/3, 8)) + "]"
		text = tag + " " + text
	}
	lines := strings.Split(wrap(text, w), "\n")
	if rest, ok := strings.CutPrefix(lines[0], tag); ok && tag != "" {
		lines[0] = m.st.origin.Render(tag) + rest
	}
	for i, l := range lines {
		mark := "  "
		if i == 0 {
			mark = "> "
		}
		lines[i] = m.st.user.Render(mark) + l
	}
	m.println(strings.Join(lines, "\n"))
}

// cancelWork cancels the turn, `!` command or slash command under way.
func (m *model) cancelWork() tea.Cmd {
	switch {
	case m.turn != nil:
		if m.turn.aborted {
			return nil
		}
		m.turn.aborted = true
		m.turn.cancel()
		m.unqueue()
		s := m.session
		return func() tea.Msg {
			s.Abort(runtime.ErrAborted)
			return nil
		}
	case m.shell != nil:
		m.shell.cancel()
	case m.command != nil:
		m.command.cancel()
	}
	return nil
}

// unqueue puts the queued prompts back into an empty input box: a
// cancelled turn cancels what waited for it. Remote turns stay: they are
// other clients', sent to the session already.
func (m *model) unqueue() {
	if len(m.queued) == 0 {
		return
	}
	if m.input.Value() == "" {
		var typed []string
		for _, q := range m.queued {
			typed = append(typed, q.typed)
		}
		m.input.SetValue(strings.Join(typed, "\n"))
	}
	m.queued = nil
}

// streamEvent handles one event of the current turn's stream.
func (m *model) streamEvent(msg streamEventMsg) tea.Cmd {
	if m.turn == nil || msg.turn != m.turn.id {
		return nil
	}
	ev := msg.ev
	s := &m.stream
	switch ev.Type {
	case runtime.EventMessage:
		if ev.Message.Role != runtime.RoleAgent {
			return nil
		}
		for _, p := range ev.Message.Content {
			switch p.Type {
			case runtime.PartText:
				m.text(p.Text)
			case runtime.PartThought:
				m.thoughtDelta(p.Thought)
			case runtime.PartMedia:
				m.endThought()
				m.flushAnswer()
				m.println(m.st.dim.Render(fmt.Sprintf("[%s media]", sanitize(p.MimeType))))
			}
		}
	case runtime.EventSessionUpdate:
		if ev.SessionUpdate.Model != "" {
			m.modelName = ev.SessionUpdate.Model
		}
	case runtime.EventUsage:
		if u := ev.Usage; u != nil {
			if u.Model != "" {
				m.modelName = u.Model
			}
			if u.InputTokens != nil {
				m.inputTokens = *u.InputTokens
			}
		}
	case runtime.EventToolRequest:
		m.endThought()
		m.flushAnswer()
		s.answerReset = true
		r := ev.ToolRequest
		tv := &toolView{id: r.RequestID, name: r.Name, desc: argsSummary(r.Args)}
		if d := r.Display; d != nil {
			if d.Name != "" {
				tv.name = d.Name
			}
			if d.Description != "" {
				tv.desc = d.Description
			}
		}
		tv.name, tv.desc = sanitize(tv.name), oneLine(sanitize(tv.desc))
		if s.executed[r.RequestID] {
			tv.status = toolRunning
		}
		s.tools = append(s.tools, tv)
		s.byID[r.RequestID] = tv
	case runtime.EventToolUpdate:
		u := ev.ToolUpdate
		tv := s.byID[u.RequestID]
		if tv == nil {
			return nil
		}
		tv.status = toolRunning
		wrote := false
		for _, p := range u.Content {
			if p.Type == runtime.PartText && p.Text != "" {
				tv.out.write(p.Text)
				wrote = true
			}
		}
		if !wrote && u.Display != nil && u.Display.Result != nil && u.Display.Result.Type == "text" && u.Display.Result.Text != "" {
			tv.out.write(u.Display.Result.Text + "\n")
			wrote = true
		}
		tv.hasOut = tv.hasOut || wrote
	case runtime.EventToolResponse:
		m.toolDone(ev.ToolResponse)
	case runtime.EventError:
		m.endThought()
		m.flushAnswer()
		e := ev.Error
		if e.Fatal {
			m.println(m.st.err.Render(wrap("✕ "+sanitize(e.Message), m.contentWidth())))
		} else {
			m.println(m.st.warn.Render(wrap("⚠ "+sanitize(e.Message), m.contentWidth())))
		}
	case runtime.EventCustom:
		m.custom(ev.Custom)
	case runtime.EventAgentEnd:
		m.endStream(ev.AgentEnd.Reason)
	}
	return nil
}

// custom shows the custom events the runtime emits.
func (m *model) custom(c *runtime.Custom) {
	if c == nil {
		return
	}
	msg, _ := c.Data["message"].(string)
	var line string
	switch c.Kind {
	case runtime.CustomModelRetry:
		if msg == "" {
			return
		}
		line = m.st.dim.Render(wrap(sanitize(msg), m.contentWidth()))
	case runtime.CustomModelFallback:
		if msg == "" {
			return
		}
		line = m.st.warn.Render(wrap("⚠ "+sanitize(msg), m.contentWidth()))
	case runtime.CustomChatCompressed:
		line = m.st.info.Render(fmt.Sprintf("ℹ Chat history compressed from %v to %v tokens.",
			c.Data["originalTokenCount"], c.Data["newTokenCount"]))
	default:
		if msg == "" {
			return
		}
		line = m.st.info.Render(wrap("ℹ "+sanitize(msg), m.contentWidth()))
	}
	m.endThought()
	m.flushAnswer()
	m.println(line)
}

// text handles a text delta: completed Markdown blocks are printed, the
// incomplete one stays live.
func (m *model) text(t string) {
	m.endThought()
	s := &m.stream
	if s.answerReset {
		s.answer.Reset()
		s.answerReset = false
	}
	t = sanitize(t)
	s.answer.WriteString(t)
	for _, b := range s.split.write(t) {
		m.printBlock(b)
	}
}

// printBlock prints a completed Markdown block of the answer.
func (m *model) printBlock(b mdBlock) {
	r := m.md.render(b.text)
	if r == "" {
		return
	}
	s := &m.stream
	switch {
	case !s.printedText:
		m.println(r)
	case b.gap:
		m.printlnTight("\n" + r)
	default:
		m.printlnTight(r)
	}
	s.printedText = true
}

// flushAnswer prints what is left of the answer under way: the text
// before a tool call, an error or the end is complete.
func (m *model) flushAnswer() {
	s := &m.stream
	for _, b := range s.split.flush() {
		m.printBlock(b)
	}
	s.printedText = false
}

// thoughtDelta adds to the thought under way.
func (m *model) thoughtDelta(t string) {
	s := &m.stream
	if !s.thinking {
		m.flushAnswer()
		s.thinking = true
		s.thought.Reset()
	}
	if s.thought.Len() < maxThought {
		s.thought.WriteString(sanitize(t))
	}
}

// endThought prints the thought that just ended: its subject on one dim
// line, or all of it when thoughts are shown (Ctrl+T).
func (m *model) endThought() {
	s := &m.stream
	if !s.thinking {
		return
	}
	s.thinking = false
	text := strings.TrimSpace(s.thought.String())
	s.thought.Reset()
	if text == "" {
		return
	}
	if m.showThoughts {
		m.println(m.st.thought.Render(wrap("✦ "+text, m.contentWidth())))
		return
	}
	m.println(m.st.thought.Render(truncate("✦ "+thoughtSubject(text), m.contentWidth())))
}

// thoughtSubject is a thought's bold subject (gemini-cli's "**Subject**"
// convention) or its first line.
func thoughtSubject(text string) string {
	if strings.HasPrefix(text, "**") {
		if end := strings.Index(text[2:], "**"); end > 0 {
			return text[2 : 2+end]
		}
	}
	line, _, _ := strings.Cut(text, "\n")
	return line
}

// toolDone prints a finished tool call.
func (m *model) toolDone(r *runtime.ToolResponse) {
	m.endThought()
	m.flushAnswer()
	s := &m.stream
	tv := s.byID[r.RequestID]
	if tv != nil {
		delete(s.byID, r.RequestID)
		for i, t := range s.tools {
			if t == tv {
				s.tools = append(s.tools[:i], s.tools[i+1:]...)
				break
			}
		}
	} else {
		tv = &toolView{id: r.RequestID, name: sanitize(r.Name)}
	}
	if r.Display != nil && r.Display.Name != "" && tv.desc == "" {
		tv.name = sanitize(r.Display.Name)
	}
	errType, _ := r.Data["errorType"].(string)
	mark := m.st.ok.Render("✓")
	switch {
	case errType == "cancelled":
		mark = m.st.warn.Render("⊘")
	case r.IsError:
		mark = m.st.err.Render("✕")
	}
	w := m.contentWidth()
	var b strings.Builder
	b.WriteString(truncate(mark+" "+lipglossBold(tv.name)+" "+m.st.dim.Render(tv.desc), w))
	body := ""
	var result *runtime.DisplayContent
	if r.Display != nil {
		result = r.Display.Result
	}
	switch {
	case result != nil && result.Type == "diff" && !r.IsError:
		body = renderDiff(m.st, result.Path, result.BeforeText, result.AfterText, w-2, scrollDiffLines)
	case r.IsError:
		text := firstNonEmpty(displayText(r.Display), contentText(r.Content))
		text, more := lastLinesHead(sanitize(strings.TrimSpace(text)), finalOutputLines)
		body = m.st.err.Render(wrapLines(text, w-2))
		if more > 0 {
			body += "\n" + m.st.dim.Render(fmt.Sprintf("… %d more lines", more))
		}
	case tv.hasOut:
		out, earlier := tv.out.tail(finalOutputLines)
		body = m.outputBox(out, earlier, w-2)
	case result != nil && result.Type == "text" && strings.TrimSpace(result.Text) != "":
		text, more := lastLinesHead(sanitize(strings.TrimSpace(result.Text)), finalOutputLines)
		body = m.st.dim.Render(wrapLines(text, w-2))
		if more > 0 {
			body += "\n" + m.st.dim.Render(fmt.Sprintf("… %d more lines", more))
		}
	case r.Display != nil && r.Display.ResultSummary != "":
		body = m.st.dim.Render(truncate(oneLine(sanitize(r.Display.ResultSummary)), w-2))
	}
	if body != "" {
		b.WriteByte('\n')
		b.WriteString(indent(body, "  "))
	}
	m.println(b.String())
}

// endStream ends the turn's stream: what is live is printed, and the
// reason it ended if not completion.
func (m *model) endStream(reason runtime.EndReason) {
	s := &m.stream
	if s.ended {
		return
	}
	s.ended = true
	m.endThought()
	m.flushAnswer()
	for _, tv := range s.tools {
		m.println(m.st.warn.Render("⊘ ") + lipglossBold(tv.name) + " " + m.st.dim.Render(tv.desc))
	}
	s.tools = nil
	if a := strings.TrimSpace(s.answer.String()); a != "" {
		m.lastAnswer = a
	}
	var line string
	switch reason {
	case runtime.EndAborted:
		line = m.st.warn.Render("Request cancelled.")
	case runtime.EndMaxTurns:
		line = m.st.warn.Render(wrap(runtime.TurnLimitMessage, m.contentWidth()))
	case runtime.EndMaxBudget:
		line = m.st.warn.Render(wrap("The response was cut at the model's output token limit.", m.contentWidth()))
	case runtime.EndMaxTime:
		line = m.st.warn.Render("The response stopped at its time limit.")
	case runtime.EndRefusal:
		line = m.st.warn.Render("The model declined to answer (blocked by its safety settings).")
	}
	if line != "" {
		m.println(line)
	}
}

// turnDone ends the current turn and starts a queued prompt.
func (m *model) turnDone(msg turnDoneMsg) tea.Cmd {
	if m.turn == nil || msg.turn != m.turn.id {
		return nil
	}
	t := m.turn
	if msg.err != nil && !(t.aborted && errors.Is(msg.err, context.Canceled)) {
		m.endThought()
		m.flushAnswer()
		m.println(m.st.err.Render(wrap("✕ "+sanitize(msg.err.Error()), m.contentWidth())))
	}
	if !m.stream.ended {
		reason := runtime.EndCompleted
		if t.aborted {
			reason = runtime.EndAborted
		}
		m.endStream(reason)
	}
	m.turn = nil
	return m.afterWork()
}

// afterWork runs what waited for the work to end: a deferred screen
// clear, the next remote turn (once no slash command runs either), else
// the next queued prompt. Remote turns go first: the session runs them
// before a queued prompt, which is sent only now.
func (m *model) afterWork() tea.Cmd {
	var cmds []tea.Cmd
	if m.clearAfterTurn && !m.busy() {
		m.clearAfterTurn = false
		cmds = append(cmds, m.fx.clear())
	}
	switch {
	case m.busy():
	case len(m.remote) > 0:
		if m.command == nil {
			t := m.remote[0]
			m.remote = m.remote[1:]
			cmds = append(cmds, m.followRemote(t))
		}
	case len(m.queued) > 0:
		q := m.queued[0]
		m.queued = m.queued[1:]
		cmds = append(cmds, m.send(q))
	}
	return tea.Batch(cmds...)
}

// argsSummary is a one-line summary of a call's arguments, for a tool
// without a description.
func argsSummary(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, args[k]))
	}
	return oneLine(strings.Join(parts, " "))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

func displayText(d *runtime.ToolDisplay) string {
	if d == nil || d.Result == nil || d.Result.Type != "text" {
		return ""
	}
	return d.Result.Text
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

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// lastLinesHead returns at most n of s's first lines and how many more it
// has.
func lastLinesHead(s string, n int) (string, int) {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s, 0
	}
	return strings.Join(lines[:n], "\n"), len(lines) - n
}

// wrapLines wraps each line of s to width.
func wrapLines(s string, width int) string { return wrap(s, width) }

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
