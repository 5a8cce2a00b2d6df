package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/tools"
)

// maxEdited bounds the file read back from the external editor.
const maxEdited = 16 << 20

// Texts of the confirmation dialog, gemini-cli's.
const (
	noEditorText = "No external editor is available. Please run /editor to configure one."
	cancelLabel  = "No, suggest changes (esc)"
)

// dialogKind is which confirmation a request needs.
type dialogKind int

const (
	kindInfo dialogKind = iota
	kindEdit
	kindExec
	kindMCP
)

func kindOf(req runtime.ApprovalRequest) dialogKind {
	switch {
	case req.MCP != nil:
		return kindMCP
	case req.Diff != nil || req.Kind == tools.KindEdit:
		return kindEdit
	case req.Kind == tools.KindExecute:
		return kindExec
	}
	return kindInfo
}

// dialogOption is one answer of the dialog.
type dialogOption struct {
	label   string
	outcome runtime.Outcome
	modify  bool
}

// dialogState is the state of the dialog of the first queued request.
type dialogState struct {
	a       *approval
	sel     int
	args    map[string]any // after Modify: the call's new arguments
	after   *string        // after Modify: the new content shown in the diff
	note    string
	editing bool
}

// editorDoneMsg reports that the external editor exited.
type editorDoneMsg struct {
	a         *approval
	dir, file string
	err       error
}

// options are the dialog's answers for a request, gemini-cli's: the
// "always" answers ("for this session", and "for all future sessions",
// which saves a policy rule) are left out when the request hides them
// (security.disableAlwaysAllow or an untrusted workspace), the "future
// sessions" one also without security.enablePermanentToolApproval
// (runtime.ApprovalRequest.Offered).
func (m *model) options(req runtime.ApprovalRequest) []dialogOption {
	once := dialogOption{label: "Allow once", outcome: runtime.ProceedOnce}
	always := dialogOption{label: "Allow for this session", outcome: runtime.ProceedAlways}
	save := dialogOption{label: "Allow for all future sessions", outcome: runtime.ProceedAlwaysAndSave}
	cancel := dialogOption{label: cancelLabel, outcome: runtime.Cancel}
	var opts []dialogOption
	switch kindOf(req) {
	case kindEdit:
		save.label = "Allow for this file in all future sessions"
		opts = []dialogOption{once, always, save}
		if req.Diff != nil {
			opts = append(opts, dialogOption{label: "Modify with external editor", modify: true})
		}
	case kindExec:
		cmd, _ := req.Args["command"].(string)
		if f := strings.Fields(cmd); len(f) > 0 {
			always.label = fmt.Sprintf("Allow for this session (every command starting with %q)", sanitize(f[0]))
		}
		save.label = "Allow this command for all future sessions"
		opts = []dialogOption{once, always, save}
	case kindMCP:
		save.label = "Allow tool for all future sessions"
		opts = []dialogOption{once,
			{label: "Allow tool for this session", outcome: runtime.ProceedAlwaysTool},
			{label: "Allow all server tools for this session", outcome: runtime.ProceedAlwaysServer},
			save}
	default:
		opts = []dialogOption{once, always, save}
	}
	opts = slices.DeleteFunc(opts, func(o dialogOption) bool { return !o.modify && !req.Offered(o.outcome) })
	return append(opts, cancel)
}

// question is the dialog's question, gemini-cli's.
func question(req runtime.ApprovalRequest) string {
	switch kindOf(req) {
	case kindEdit:
		return "Apply this change?"
	case kindExec:
		name := req.DisplayName
		if name == "" {
			name = req.Tool
		}
		return "Allow execution of [" + sanitize(name) + "]?"
	case kindMCP:
		return fmt.Sprintf("Allow execution of MCP tool %q from server %q?", sanitize(req.MCP.ToolName), sanitize(req.MCP.ServerName))
	}
	return "Do you want to proceed?"
}

// addApproval queues a request; the first one is shown.
func (m *model) addApproval(a *approval) tea.Cmd {
	m.approvals = append(m.approvals, a)
	if len(m.approvals) == 1 {
		m.dialog = dialogState{a: a}
	}
	return nil
}

// removeApproval drops a request (answered, or its context ended).
func (m *model) removeApproval(a *approval) {
	for i, q := range m.approvals {
		if q == a {
			m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
			break
		}
	}
	if m.dialog.a == a {
		m.dialog = dialogState{}
		if len(m.approvals) > 0 {
			m.dialog.a = m.approvals[0]
		}
	}
}

// answer answers the shown request.
func (m *model) answer(o runtime.Outcome) {
	a := m.dialog.a
	if a == nil {
		return
	}
	ans := approvalAnswer{outcome: o}
	if o != runtime.Cancel {
		ans.args = m.dialog.args
	}
	select {
	case a.answer <- ans:
	default:
	}
	m.removeApproval(a)
}

func (m *model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	if m.dialog.a == nil || m.dialog.editing {
		return nil
	}
	opts := m.options(m.dialog.a.req)
	switch ks := k.String(); ks {
	case "up", "ctrl+p", "k":
		if m.dialog.sel > 0 {
			m.dialog.sel--
		}
	case "down", "ctrl+n", "j", "tab":
		if m.dialog.sel < len(opts)-1 {
			m.dialog.sel++
		}
	case "enter":
		return m.choose(opts[m.dialog.sel])
	case "esc":
		m.answer(runtime.Cancel)
	case "ctrl+c":
		m.answer(runtime.Cancel)
		return m.cancelWork()
	default:
		if n, err := strconv.Atoi(ks); err == nil && n >= 1 && n <= len(opts) {
			m.dialog.sel = n - 1
			return m.choose(opts[n-1])
		}
	}
	return nil
}

func (m *model) choose(o dialogOption) tea.Cmd {
	if o.modify {
		return m.modify()
	}
	m.answer(o.outcome)
	return nil
}

// modify opens the proposed content in the external editor: a 0600 file
// in a 0700 directory of its own, removed afterwards.
func (m *model) modify() tea.Cmd {
	d := &m.dialog
	req := d.a.req
	if m.cfg.Editor == "" || len(strings.Fields(m.cfg.Editor)) == 0 {
		d.note = noEditorText
		return nil
	}
	if m.cfg.ModifyArgs == nil || req.Diff == nil {
		d.note = "This change cannot be modified here."
		return nil
	}
	content := req.Diff.After
	if d.after != nil {
		content = *d.after
	}
	dir, err := os.MkdirTemp("", "agentry-tool-modify-*")
	if err != nil {
		d.note = "Cannot create a file to edit: " + err.Error()
		return nil
	}
	file := filepath.Join(dir, "new-"+filepath.Base(req.Diff.Path))
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		os.RemoveAll(dir)
		d.note = "Cannot create a file to edit: " + err.Error()
		return nil
	}
	args := strings.Fields(m.cfg.Editor)
	cmd := exec.Command(args[0], append(args[1:], file)...)
	d.editing = true
	d.note = "Modify in progress: Save and close external editor to continue"
	a := d.a
	return m.fx.exec(cmd, func(err error) tea.Msg { return editorDoneMsg{a: a, dir: dir, file: file, err: err} })
}

// editorDone reads the edited content back and asks again with its diff.
func (m *model) editorDone(msg editorDoneMsg) tea.Cmd {
	defer os.RemoveAll(msg.dir)
	d := &m.dialog
	if d.a != msg.a {
		return nil // answered or withdrawn meanwhile
	}
	d.editing = false
	d.note = ""
	if msg.err != nil {
		d.note = "The editor failed: " + msg.err.Error()
		return nil
	}
	content, err := readBounded(msg.file, maxEdited)
	if err != nil {
		d.note = "Cannot read the edited file: " + err.Error()
		return nil
	}
	args, err := m.cfg.ModifyArgs(d.a.req, content)
	if err != nil {
		d.note = "Cannot use the edited content: " + err.Error()
		return nil
	}
	d.args = args
	d.after = &content
	d.sel = 0
	return nil
}

var errTooLarge = errors.New("file too large")

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > limit {
		return "", fmt.Errorf("%w (more than %d MiB)", errTooLarge, limit>>20)
	}
	return string(b), nil
}

// dialogView renders the dialog in at most height lines.
func (m *model) dialogView(height int) string {
	d := &m.dialog
	req := d.a.req
	opts := m.options(req)
	w := m.width - 4 // inside the border and padding
	var head []string
	title := "? " + lipglossBold(sanitize(firstNonEmpty(req.DisplayName, req.Tool)))
	if req.Description != "" {
		title += " " + m.st.dim.Render(oneLine(sanitize(req.Description)))
	}
	if n := len(m.approvals); n > 1 {
		title += m.st.dim.Render(fmt.Sprintf("  (1 of %d)", n))
	}
	head = append(head, truncate(title, w))

	var tail []string
	tail = append(tail, "", m.st.accent.Render(wrap(question(req), w)), "")
	for i, o := range opts {
		line := fmt.Sprintf("%d. %s", i+1, o.label)
		if i == d.sel {
			line = m.st.selected.Render("● " + line)
		} else {
			line = "  " + line
		}
		tail = append(tail, truncate(line, w))
	}
	if d.note != "" {
		tail = append(tail, "", m.st.warn.Render(wrap(d.note, w)))
	}
	// The body gets what the border, head and tail leave.
	room := max(height-2-len(head)-countLines(tail)-1, 3)
	var body string
	switch kindOf(req) {
	case kindEdit:
		if req.Diff != nil {
			after := req.Diff.After
			if d.after != nil {
				after = *d.after
			}
			body = renderDiff(m.st, req.Diff.Path, req.Diff.Before, after, w, room)
		}
	case kindExec:
		cmd, _ := req.Args["command"].(string)
		text, more := lastLinesHead(wrap(sanitize(cmd), w-2), room)
		body = m.st.info.Render(indent(text, "  "))
		if more > 0 {
			body += "\n" + m.st.dim.Render(fmt.Sprintf("  … %d more lines", more))
		}
	case kindMCP:
		body = m.st.dim.Render(truncate("Server: "+sanitize(req.MCP.ServerName), w) + "\n" +
			truncate("Tool: "+sanitize(req.MCP.ToolName), w))
	default:
		if s := argsSummary(req.Args); s != "" {
			body = m.st.dim.Render(truncate(sanitize(s), w))
		}
	}
	parts := head
	if body != "" {
		parts = append(parts, "", body)
	}
	parts = append(parts, tail...)
	return m.st.dialog.Width(m.width).Render(strings.Join(parts, "\n"))
}

func countLines(lines []string) int {
	n := 0
	for _, l := range lines {
		n += strings.Count(l, "\n") + 1
	}
	return n
}
