package processors_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/runtime"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type source struct{ text string }

func (s source) Context(agent.ReadonlyContext) ([]*genai.Part, error) {
	return []*genai.Part{{Text: s.text}}, nil
}

func TestContentProcessor(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "main.go"), "package main")
	write(t, filepath.Join(ws, "node_modules", "dep", "index.js"), "x")
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	content := processors.NewContent(processors.ContentConfig{
		Roots: []string{ws}, TempDir: "/tmp/agentry-test", OS: "plan9", Now: func() time.Time { return now },
		Memory:  processors.Memory{Global: "global rules", Project: "--- Context from: /p/AGENTRY.md ---\nproject rules\n--- End of Context from: /p/AGENTRY.md ---"},
		Sources: []processors.ContextSource{source{"editor: main.go is open"}},
	})
	rec := &recorder{}
	s, err := runtime.New(t.Context(), runtime.Config{Model: "gemini-2.5-flash", Resolver: resolver{rec}, Instruction: "core prompt", Chain: processors.NewChain(content)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	send := func(text string) { sendAll(t, s, text) }
	send("first")
	// A file created later does not change the session context: it is
	// computed once per session.
	write(t, filepath.Join(ws, "later.txt"), "x")
	send("second")

	calls := rec.calls()
	first, second := calls[0], calls[1]
	sc := first.contents[0].Parts[0].Text
	want := "<session_context>\nThis is agentry. We are setting up the context for our chat.\n" +
		"Today's date is Sunday, November 22, 2026 (formatted according to the user's locale).\n" +
		"My operating system is: plan9\n" +
		"The project's temporary directory is: /tmp/agentry-test\n" +
		"- **Workspace Directories:**\n  - " + ws + "\n- **Directory Structure:**\n\n" +
		"Showing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (200 items) was reached.\n\n" +
		ws + "/\n├───main.go\n└───node_modules/...\n\n" +
		"--- Context from: /p/AGENTRY.md ---\nproject rules\n--- End of Context from: /p/AGENTRY.md ---\n" +
		"</session_context>"
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("session context (-want +got):\n%s", diff)
	}
	if got := second.contents[0].Parts[0].Text; got != sc {
		t.Errorf("the second request's session context changed:\n%s", got)
	}
	// As gemini-cli sends them: one user turn, the session context, the
	// context source and the prompt as its parts.
	var parts []string
	for _, p := range first.contents[0].Parts {
		parts = append(parts, p.Text)
	}
	if len(first.contents) != 1 || first.contents[0].Role != "user" {
		t.Errorf("first request has %d contents, want one user turn", len(first.contents))
	}
	if diff := cmp.Diff([]string{sc, "editor: main.go is open", "first"}, parts); diff != "" {
		t.Errorf("first turn's parts (-want +got):\n%s", diff)
	}
	var si []string
	for _, p := range first.cfg.SystemInstruction.Parts {
		si = append(si, p.Text)
	}
	if !strings.Contains(si[0], "core prompt") || si[len(si)-1] != "global rules" {
		t.Errorf("system instruction = %q", si)
	}
}

// TestContentSetMemory: new global memory reaches the next request's
// system instruction and leaves the session context (the requests'
// common prefix) as it was; new project memory rebuilds the session
// context.
func TestContentSetMemory(t *testing.T) {
	ws := t.TempDir()
	content := processors.NewContent(processors.ContentConfig{Roots: []string{ws}, Memory: processors.Memory{Global: "old global", Project: "old project"}})
	rec := &recorder{}
	s, err := runtime.New(t.Context(), runtime.Config{Model: "gemini-2.5-flash", Resolver: resolver{rec}, Instruction: "core prompt", Chain: processors.NewChain(content)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	send := func(text string) { sendAll(t, s, text) }
	instruction := func(i int) string {
		parts := rec.calls()[i].cfg.SystemInstruction.Parts
		return parts[len(parts)-1].Text
	}
	sessionContext := func(i int) string { return rec.calls()[i].contents[0].Parts[0].Text }
	send("first")
	write(t, filepath.Join(ws, "later.txt"), "x")
	content.SetMemory(processors.Memory{Global: "new global", Project: "old project"})
	send("second")
	if instruction(1) != "new global" || sessionContext(1) != sessionContext(0) {
		t.Errorf("after new global memory: instruction %q; session context changed: %v", instruction(1), sessionContext(1) != sessionContext(0))
	}
	content.SetMemory(processors.Memory{Global: "new global", Project: "new project"})
	send("third")
	if sc := sessionContext(2); !strings.Contains(sc, "new project") || strings.Contains(sc, "old project") || !strings.Contains(sc, "later.txt") {
		t.Errorf("after new project memory, session context:\n%s", sc)
	}
	// Memory may change while a request is being built (-race checks).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			content.SetMemory(processors.Memory{Global: fmt.Sprint("global ", i), Project: fmt.Sprint("project ", i%2)})
		}
	}()
	send("fourth")
	<-done
}

func TestContentWithoutListing(t *testing.T) {
	c := processors.NewContent(processors.ContentConfig{Roots: []string{t.TempDir()}, MaxItems: -1, OS: "linux",
		Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	rec := &recorder{}
	runSession(t, runtime.Config{Resolver: resolver{rec}, Chain: processors.NewChain(c)})
	if sc := rec.calls()[0].contents[0].Parts[0].Text; strings.Contains(sc, "Directory Structure") {
		t.Errorf("listing present with MaxItems < 0:\n%s", sc)
	}
}

func TestFolderStructure(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"b.txt", "a.txt", "src/x.go", "src/y.go", "src/deep/z.go", ".git/config", "docs/readme.md"} {
		write(t, filepath.Join(root, f), "")
	}
	// Bounded breadth-first, as gemini-cli's: the root's two files and
	// three folders take five of the six slots, docs' file the sixth, and
	// src is not read at all.
	got := processors.FolderStructure(context.Background(), root, 6, nil)
	want := "Showing up to 6 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (6 items) was reached.\n\n" +
		root + "/\n" +
		"├───a.txt\n" +
		"├───b.txt\n" +
		"├───.git/...\n" +
		"├───docs/\n" +
		"│   └───readme.md\n" +
		"└───src/"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bounded listing (-want +got):\n%s", diff)
	}
	full := processors.FolderStructure(context.Background(), root, 200, nil)
	wantFull := "Showing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (200 items) was reached.\n\n" +
		root + "/\n" +
		"├───a.txt\n" +
		"├───b.txt\n" +
		"├───.git/...\n" +
		"├───docs/\n" +
		"│   └───readme.md\n" +
		"└───src/\n" +
		"    ├───x.go\n" +
		"    ├───y.go\n" +
		"    └───deep/\n" +
		"        └───z.go"
	if diff := cmp.Diff(wantFull, full); diff != "" {
		t.Errorf("full listing (-want +got):\n%s", diff)
	}
	if got := processors.FolderStructure(context.Background(), filepath.Join(root, "absent"), 10, nil); !strings.HasPrefix(got, "Error: Could not read directory") {
		t.Errorf("missing dir: %q", got)
	}
	// An ignore filter hides ignored files and shows ignored folders with
	// "...", as gemini-cli's listing does with its file service.
	ignore := func(abs string, isDir bool) bool {
		return abs == filepath.Join(root, "b.txt") || abs == filepath.Join(root, "src", "deep")
	}
	filtered := processors.FolderStructure(context.Background(), root, 200, ignore)
	if strings.Contains(filtered, "b.txt") || !strings.Contains(filtered, "└───deep/...") || strings.Contains(filtered, "z.go") {
		t.Errorf("filtered listing:\n%s", filtered)
	}
}

func TestLoadMemory(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".agentry", "AGENTRY.md"), "user rules")
	write(t, filepath.Join(home, ".gemini", "GEMINI.md"), "gemini user rules")
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "AGENTRY.md"), "repo rules")
	write(t, filepath.Join(repo, "sub", "GEMINI.md"), "sub rules")
	ws := filepath.Join(repo, "sub", "ws")
	write(t, filepath.Join(ws, "AGENTRY.md"), "  \n") // blank: skipped
	write(t, filepath.Join(ws, "GEMINI.md"), "ws rules")
	if err := os.Symlink(filepath.Join(repo, "AGENTRY.md"), filepath.Join(repo, "sub", "AGENTRY.md")); err != nil {
		t.Fatal(err)
	}
	cfg := processors.MemoryConfig{
		GlobalDirs: []string{filepath.Join(home, ".agentry"), filepath.Join(home, ".gemini")},
		Roots:      []string{ws}, FileNames: []string{"AGENTRY.md", "GEMINI.md"}, Trusted: true,
	}
	m, err := processors.LoadMemory(cfg)
	if err != nil {
		t.Fatal(err)
	}
	block := func(path, text string) string {
		return "--- Context from: " + path + " ---\n" + text + "\n--- End of Context from: " + path + " ---"
	}
	wantGlobal := block(filepath.Join(home, ".agentry", "AGENTRY.md"), "user rules") + "\n\n" + block(filepath.Join(home, ".gemini", "GEMINI.md"), "gemini user rules")
	if diff := cmp.Diff(wantGlobal, m.Global); diff != "" {
		t.Errorf("global (-want +got):\n%s", diff)
	}
	// Root to leaf; the symlink to repo/AGENTRY.md is read once.
	wantProject := block(filepath.Join(repo, "AGENTRY.md"), "repo rules") + "\n\n" +
		block(filepath.Join(repo, "sub", "GEMINI.md"), "sub rules") + "\n\n" +
		block(filepath.Join(ws, "GEMINI.md"), "ws rules")
	if diff := cmp.Diff(wantProject, m.Project); diff != "" {
		t.Errorf("project (-want +got):\n%s", diff)
	}
	cfg.Trusted = false
	m, err = processors.LoadMemory(cfg)
	if err != nil || m.Project != "" || m.Global == "" {
		t.Errorf("untrusted: project %q global %q err %v; want no project context", m.Project, m.Global, err)
	}
	// Without a git root only the workspace itself counts.
	lone := t.TempDir()
	write(t, filepath.Join(lone, "AGENTRY.md"), "lone")
	m, err = processors.LoadMemory(processors.MemoryConfig{Roots: []string{lone}, FileNames: []string{"AGENTRY.md"}, Trusted: true})
	if err != nil || m.Project != block(filepath.Join(lone, "AGENTRY.md"), "lone") {
		t.Errorf("no git root: %q, %v", m.Project, err)
	}
}

// sendAll sends text to s and reads its stream to the end.
func sendAll(t *testing.T, s *runtime.Session, text string) {
	t.Helper()
	id, err := s.Send(t.Context(), runtime.TextMessage(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range s.Stream(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
	}
}
