package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/runtime"
)

// Bounds of the companion's line protocol (docs/ide.md, "A companion for
// any editor").
const (
	// companionMaxLine bounds one stdin line: a diffAccepted line holds a
	// whole file.
	companionMaxLine = companion.MaxBodyBytes
	// companionMaxFiles is how many open files the context keeps, the
	// most recently focused first (gemini-cli keeps 10).
	companionMaxFiles = 10
	// companionMaxSelection bounds a selection, in UTF-16 code units as
	// gemini-cli's VS Code companion counts them.
	companionMaxSelection = 16384
)

// addIDECompanion adds `agentry ide companion` to the ide command and
// returns it.
func addIDECompanion(ide *cobra.Command, io stdio, in *interrupts, exit *int) *cobra.Command {
	ide.AddCommand(newIDECompanionCommand(io, in, exit))
	return ide
}

// newIDECompanionCommand is `agentry ide companion`: a companion for an
// editor plugin that speaks JSON lines on stdin and stdout.
func newIDECompanionCommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	var workspace []string
	var pid int
	var ideName, ideDisplay string
	cmd := &cobra.Command{
		Use:   "companion --workspace DIR[,DIR…] [--pid N]",
		Short: "Run an IDE companion for an editor plugin (JSON lines on stdin and stdout)",
		Long: `Runs the companion side of gemini-cli's IDE contract for an editor without
one: an MCP server on 127.0.0.1 that gemini-cli (or agentry) in the editor's
terminals finds through its discovery file. The editor plugin writes its
events as JSON lines on stdin (files opened, focused and closed, cursor,
selection, a diff accepted or rejected) and reads requests as JSON lines on
stdout (openDiff, closeDiff). The discovery file and the environment the
editor should set in its terminals are printed on stderr; the token is only
in the discovery file (mode 0600). EOF on stdin or SIGTERM ends it and
removes the file. The protocol is in docs/ide.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			*exit = runIDECompanion(cmd.Context(), io, in, workspace, pid, ideName, ideDisplay)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&workspace, "workspace", nil, "the editor's workspace roots, comma-separated (required; relative paths are made absolute)")
	cmd.Flags().IntVar(&pid, "pid", 0, "the editor's process id, in the discovery file's name (default: this process's parent)")
	cmd.Flags().StringVar(&ideName, "ide-name", defaultCompanionIDEName, "the editor's name in the discovery file (its ideInfo, which CLIs use instead of detecting the IDE from the environment)")
	cmd.Flags().StringVar(&ideDisplay, "ide-display-name", defaultCompanionIDEDisplay, "the editor's display name in the discovery file (\"Connected to <name>\")")
	return cmd
}

func runIDECompanion(ctx context.Context, io stdio, in *interrupts, workspace []string, pid int, ideName, ideDisplay string) int {
	fail := func(err error) int {
		writeErrorLine(io.err, err)
		return runtime.ExitInput
	}
	if len(workspace) == 0 {
		return fail(errors.New("agentry ide companion: --workspace is required: the editor's open folders, comma-separated"))
	}
	roots := make([]string, 0, len(workspace))
	for _, w := range workspace {
		abs, err := filepath.Abs(w)
		if err != nil {
			return fail(fmt.Errorf("agentry ide companion: --workspace %q: %w", w, err))
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return fail(fmt.Errorf("agentry ide companion: --workspace %q is not a directory", w))
		}
		roots = append(roots, abs)
	}
	if pid < 0 {
		return fail(fmt.Errorf("agentry ide companion: --pid %d: a process id is positive", pid))
	}
	if strings.TrimSpace(ideName) == "" || strings.TrimSpace(ideDisplay) == "" {
		return fail(errors.New("agentry ide companion: --ide-name and --ide-display-name must not be empty (a discovery file without both is ignored by gemini-cli and agentry outside VS Code's terminals)"))
	}
	info := &idewire.IDEInfo{Name: ideName, DisplayName: ideDisplay}
	out := &lineWriter{w: io.out}
	srv, err := companion.New(companion.Config{
		Workspace: roots,
		IDEPID:    pid,
		IDEInfo:   info,
		Editor:    out,
		OnClients: func(n int) { out.write(companionOut{Type: "clients", Count: &n}) },
	})
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	fmt.Fprintf(io.err, "agentry ide companion: listening on 127.0.0.1:%d; discovery file %s\n", srv.Port(), srv.File())
	fmt.Fprintln(io.err, "agentry ide companion: set in the editor's terminals:")
	for _, e := range srv.Env() {
		fmt.Fprintln(io.err, e)
	}
	out.write(companionOut{Type: "ready", Port: srv.Port(), File: srv.File()})

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := in.handle()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := make(chan error, 1)
	go func() {
		done <- companionLines(io.in, out, srv, func() int64 { return time.Now().UnixMilli() }, companionMaxLine)
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		// stdin is left to the process's end: a read cannot be cut.
	}
	if cerr := srv.Close(); cerr != nil {
		return fail(cerr)
	}
	if err != nil {
		return fail(fmt.Errorf("agentry ide companion: read stdin: %w", err))
	}
	return 0
}

// The editor named in the discovery file when the command is not told
// which: with an ideInfo, CLIs connect from any terminal, not only from
// one whose environment names a known IDE.
const (
	defaultCompanionIDEName    = "agentry-companion"
	defaultCompanionIDEDisplay = "Editor"
)

// companionIn is one line an editor writes.
type companionIn struct {
	Type      string  `json:"type"`
	Path      string  `json:"path"`
	Line      int     `json:"line"`
	Character int     `json:"character"`
	Text      *string `json:"text"`
	Content   *string `json:"content"`
	Trusted   *bool   `json:"trusted"`
}

// companionOut is one line the companion writes.
type companionOut struct {
	Type    string `json:"type"`
	Path    string `json:"path,omitempty"`
	Content string `json:"content,omitempty"`
	Port    int    `json:"port,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Error   string `json:"error,omitempty"`
	Count   *int   `json:"count,omitempty"`
}

// lineWriter writes whole JSON lines, one at a time; it is the companion's
// Editor.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(o companionOut) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(o) // a struct of strings and ints always encodes
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b.Bytes())
}

func (l *lineWriter) OpenDiff(path, content string) error {
	l.write(companionOut{Type: "openDiff", Path: path, Content: content})
	return nil
}

func (l *lineWriter) CloseDiff(path string) { l.write(companionOut{Type: "closeDiff", Path: path}) }

// companionServer is what the line loop drives (*companion.Server).
type companionServer interface {
	SetContext(idewire.Context)
	AcceptDiff(path, content string) error
	RejectDiff(path string) error
	UpdateDiff(path, content string) error
}

// editorState is the editor's open files as the events describe them.
type editorState struct {
	files   []idewire.File // most recently focused first
	trusted *bool
}

func (s *editorState) context() idewire.Context {
	if len(s.files) == 0 && s.trusted == nil {
		return idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: []idewire.File{}}}
	}
	return idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: slices.Clone(s.files), IsTrusted: s.trusted}}
}

func (s *editorState) find(path string) int {
	return slices.IndexFunc(s.files, func(f idewire.File) bool { return f.Path == path })
}

// companionLines reads the editor's lines until EOF, applying each; a bad
// line gets an error line on out and the loop goes on.
func companionLines(r io.Reader, out *lineWriter, srv companionServer, now func() int64, maxLine int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var st editorState
	for n := 1; ; n++ {
		line, err := readCompanionLine(br, maxLine)
		if errors.Is(err, errLineTooLong) {
			out.write(companionOut{Type: "error", Line: n, Error: fmt.Sprintf("line %d is longer than %d bytes: it was skipped", n, maxLine)})
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := applyLine(&st, line, srv, now); perr != nil {
				out.write(companionOut{Type: "error", Line: n, Error: fmt.Sprintf("line %d: %v", n, perr)})
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readCompanionLine reads one line without its newline, at most max bytes; a
// longer one is read to its end and dropped.
func readCompanionLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// applyLine applies one editor event.
func applyLine(st *editorState, line []byte, srv companionServer, now func() int64) error {
	var ev companionIn
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return fmt.Errorf("not a JSON event object: %v", err)
	}
	needPath := func() error {
		if ev.Path == "" {
			return fmt.Errorf("%s needs a path", ev.Type)
		}
		if !filepath.IsAbs(ev.Path) {
			return fmt.Errorf("%s: path %q is not absolute", ev.Type, ev.Path)
		}
		return nil
	}
	switch ev.Type {
	case "opened", "focused":
		if err := needPath(); err != nil {
			return err
		}
		i := st.find(ev.Path)
		f := idewire.File{Path: ev.Path, Timestamp: now()}
		if i >= 0 {
			if ev.Type == "opened" {
				return nil // already open: nothing changes
			}
			st.files = slices.Delete(st.files, i, i+1)
		}
		if ev.Type == "focused" {
			for j := range st.files {
				st.files[j].IsActive, st.files[j].Cursor, st.files[j].SelectedText = false, nil, ""
			}
			f.IsActive = true
			st.files = slices.Insert(st.files, 0, f)
		} else {
			// Opened in the background: after the active file, whose
			// timestamp moves on too, since gemini-cli takes the newest
			// file for the active one.
			at := 0
			if len(st.files) > 0 && st.files[0].IsActive {
				at = 1
				st.files[0].Timestamp = now()
			}
			st.files = slices.Insert(st.files, at, f)
		}
		if len(st.files) > companionMaxFiles {
			st.files = st.files[:companionMaxFiles]
		}
	case "closed":
		if err := needPath(); err != nil {
			return err
		}
		i := st.find(ev.Path)
		if i < 0 {
			return fmt.Errorf("closed: %s is not open", ev.Path)
		}
		st.files = slices.Delete(st.files, i, i+1)
	case "cursor", "selection":
		if err := needPath(); err != nil {
			return err
		}
		if len(st.files) == 0 || st.files[0].Path != ev.Path || !st.files[0].IsActive {
			return fmt.Errorf("%s: %s is not the focused file (send focused first)", ev.Type, ev.Path)
		}
		if ev.Type == "cursor" {
			if ev.Line < 1 || ev.Character < 1 {
				return fmt.Errorf("cursor: line and character are 1-based, got %d:%d", ev.Line, ev.Character)
			}
			st.files[0].Cursor = &idewire.Cursor{Line: ev.Line, Character: ev.Character}
		} else {
			if ev.Text == nil {
				return errors.New(`selection needs a text ("" when the selection is cleared)`)
			}
			st.files[0].SelectedText = cutSelection(*ev.Text)
		}
	case "trusted":
		if ev.Trusted == nil {
			return errors.New("trusted needs trusted: true or false")
		}
		st.trusted = ev.Trusted
	case "diffAccepted":
		if err := needPath(); err != nil {
			return err
		}
		if ev.Content == nil {
			return errors.New("diffAccepted needs the content the user accepted")
		}
		return srv.AcceptDiff(ev.Path, *ev.Content)
	case "diffRejected":
		if err := needPath(); err != nil {
			return err
		}
		return srv.RejectDiff(ev.Path)
	case "diffEdited":
		if err := needPath(); err != nil {
			return err
		}
		if ev.Content == nil {
			return errors.New("diffEdited needs the view's content")
		}
		return srv.UpdateDiff(ev.Path, *ev.Content)
	case "":
		return errors.New(`no "type"`)
	default:
		return fmt.Errorf("unknown type %q (want opened, focused, closed, cursor, selection, trusted, diffAccepted, diffRejected or diffEdited)", ev.Type)
	}
	srv.SetContext(st.context())
	return nil
}

// cutSelection cuts s at companionMaxSelection UTF-16 code units, marked
// as gemini-cli's VS Code companion marks it.
func cutSelection(s string) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > companionMaxSelection {
			return strings.ToValidUTF8(s[:i], "") + "... [TRUNCATED]"
		}
	}
	return s
}
