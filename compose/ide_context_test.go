package compose

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/transcript"
)

// testIDE is an IDE connection whose context the test sets.
type testIDE struct {
	mu sync.Mutex
	c  idewire.Context
	n  uint64
}

func (f *testIDE) Context() (idewire.Context, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.c, f.n
}

func (f *testIDE) set(files ...idewire.File) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.c = idewire.Context{WorkspaceState: &idewire.WorkspaceState{OpenFiles: files}}
	f.n++
}

// The texts gemini-cli 0.61.0 sends for the contexts of TestIDEContext
// (ide/idecontext's golden test checks the texts against its code).
const (
	ideFull1 = "Here is the user's editor context as a JSON object. This is for your information only.\n```json\n{\n  \"activeFile\": {\n    \"path\": \"/w/a.go\",\n    \"cursor\": {\n      \"line\": 1,\n      \"character\": 1\n    }\n  },\n  \"otherOpenFiles\": [\n    \"/w/b.go\"\n  ]\n}\n```"
	ideDelta = "Here is a summary of changes in the user's editor context, in JSON format. This is for your information only.\n```json\n{\n  \"changes\": {\n    \"cursorMoved\": {\n      \"path\": \"/w/a.go\",\n      \"cursor\": {\n        \"line\": 2,\n        \"character\": 5\n      }\n    },\n    \"selectionChanged\": {\n      \"path\": \"/w/a.go\",\n      \"selectedText\": \"x\"\n    }\n  }\n}\n```"
	ideFull2 = "Here is the user's editor context as a JSON object. This is for your information only.\n```json\n{\n  \"activeFile\": {\n    \"path\": \"/w/a.go\",\n    \"cursor\": {\n      \"line\": 2,\n      \"character\": 5\n    },\n    \"selectedText\": \"x\"\n  },\n  \"otherOpenFiles\": [\n    \"/w/b.go\"\n  ]\n}\n```"
)

// lastUserTexts is the text parts of the last user turn of a request.
func lastUserTexts(r modeltest.Request) []string {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		if c := r.Contents[i]; c.Role == genai.RoleUser {
			var out []string
			for _, p := range c.Parts {
				if p.FunctionResponse != nil {
					out = append(out, "fr:"+p.FunctionResponse.Name)
				} else {
					out = append(out, p.Text)
				}
			}
			return out
		}
	}
	return nil
}

// ideTexts counts the request's parts that carry an editor context.
func ideTexts(r modeltest.Request) int {
	n := 0
	for _, c := range r.Contents {
		for _, p := range c.Parts {
			if strings.HasPrefix(p.Text, "Here is the user's editor context") || strings.HasPrefix(p.Text, "Here is a summary of changes in the user's editor context") {
				n++
			}
		}
	}
	return n
}

// TestIDEContext: a session built with an IDE sends the editor's context
// as gemini-cli does — the full context with the first prompt, ahead of
// it in its turn (after the session context); nothing more with the
// tool's response; only the changes with the next prompt; nothing when
// nothing changed; the full context again after a rewind and in a resumed
// session — and every text stays in the history where it was sent, in
// the stored session and in the transcript (with the prompt as typed for
// display).
func TestIDEContext(t *testing.T) {
	s := settingsFor(t)
	writeFile(t, filepath.Join(s.Workspace, "a.txt"), "alpha\n")
	b := newScript(
		callTurn("looking", fc("r1", "read_file", map[string]any{"file_path": "a.txt"})),
		textTurn("a.txt says alpha"),
		textTurn("second answer"),
		textTurn("third answer"),
		textTurn("fourth answer"),
		textTurn("fifth answer"),
	)
	s.Session.Path = filepath.Join(t.TempDir(), "sessions.db")
	store, closeStore, err := OpenStore(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	ide := &testIDE{}
	ide.set(idewire.File{Path: "/w/b.go", Timestamp: 1}, idewire.File{Path: "/w/a.go", Timestamp: 2, IsActive: true, Cursor: &idewire.Cursor{Line: 1, Character: 1}})
	opts := Options{SessionID: "ide", Resolver: fixedResolver{B: b}, SessionService: store, IDEContext: ide}
	sess, err := FromSettings(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	run(t, sess, "read a.txt")
	reqs := b.Requests()
	first := lastUserTexts(reqs[0])
	if len(first) != 3 || !strings.HasPrefix(first[0], "<session_context>") || first[1] != ideFull1 || first[2] != "read a.txt" {
		t.Fatalf("first request's user turn: %q\nwant the session context, %q and the prompt", first, ideFull1)
	}
	if got := lastUserTexts(reqs[1]); len(got) != 1 || got[0] != "fr:read_file" || ideTexts(reqs[1]) != 1 {
		t.Errorf("the tool response's request: last turn %q, %d editor contexts; want only the response, the first context kept", got, ideTexts(reqs[1]))
	}

	ide.set(idewire.File{Path: "/w/b.go", Timestamp: 1}, idewire.File{Path: "/w/a.go", Timestamp: 3, IsActive: true, Cursor: &idewire.Cursor{Line: 2, Character: 5}, SelectedText: "x"})
	run(t, sess, "second question")
	reqs = b.Requests()
	if got := lastUserTexts(reqs[2]); len(got) != 2 || got[0] != ideDelta || got[1] != "second question" {
		t.Errorf("second prompt's turn: %q, want the delta then the prompt", got)
	}
	if n := ideTexts(reqs[2]); n != 2 {
		t.Errorf("second prompt's request holds %d editor contexts, want 2 (the full one kept)", n)
	}

	run(t, sess, "third question")
	reqs = b.Requests()
	if got := lastUserTexts(reqs[3]); len(got) != 1 || got[0] != "third question" {
		t.Errorf("third prompt's turn with nothing changed: %q", got)
	}

	live, err := runtime.GetSession(t.Context(), store, "ide")
	if err != nil {
		t.Fatal(err)
	}
	path, _ := live.State().Get(runtime.StateTranscript)
	rec, err := transcript.Load(path.(string))
	if err != nil {
		t.Fatal(err)
	}
	var third string
	var users []transcript.Message
	for _, m := range rec.Messages {
		if m.Type == transcript.TypeUser {
			users = append(users, m)
			if strings.Contains(string(m.Content), "third question") {
				third = m.ID
			}
		}
	}
	if len(users) != 3 {
		t.Fatalf("%d user messages in the transcript, want 3", len(users))
	}
	var parts []*genai.Part
	if err := json.Unmarshal(users[1].Content, &parts); err != nil {
		t.Fatal(err)
	}
	var display []*genai.Part
	_ = json.Unmarshal(users[1].DisplayContent, &display)
	if len(parts) != 2 || parts[0].Text != ideDelta || parts[1].Text != "second question" || len(display) != 1 || display[0].Text != "second question" {
		t.Errorf("transcript's second prompt: content %s, display %s; want the delta and the prompt, the prompt for display", users[1].Content, users[1].DisplayContent)
	}

	// A rewind rebuilds the history from the transcript: the texts the
	// model saw are kept, and the next prompt gets the full context.
	if _, err := sess.Rewind(t.Context(), third); err != nil {
		t.Fatal(err)
	}
	run(t, sess, "fourth question")
	reqs = b.Requests()
	if got := lastUserTexts(reqs[4]); len(got) != 2 || got[0] != ideFull2 || got[1] != "fourth question" {
		t.Errorf("first prompt after a rewind: %q, want the full context then the prompt", got)
	}
	if n := ideTexts(reqs[4]); n != 3 {
		t.Errorf("after the rewind the request holds %d editor contexts, want 3 (full, delta, full)", n)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}

	// A resumed session starts over with the full context.
	sess2, err := FromSettings(t.Context(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	run(t, sess2, "fifth question")
	reqs = b.Requests()
	if got := lastUserTexts(reqs[5]); len(got) != 2 || got[0] != ideFull2 || got[1] != "fifth question" {
		t.Errorf("first prompt of the resumed session: %q, want the full context then the prompt", got)
	}
	if n := ideTexts(reqs[5]); n != 4 {
		t.Errorf("the resumed session's request holds %d editor contexts, want 4", n)
	}
}

// TestNoIDE: without an IDE the requests carry no editor context.
func TestNoIDE(t *testing.T) {
	s := settingsFor(t)
	b := newScript(textTurn("answer"))
	sess, err := FromSettings(t.Context(), s, Options{Resolver: fixedResolver{B: b}})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	run(t, sess, "hello")
	if got := lastUserTexts(b.Requests()[0]); len(got) != 2 || got[1] != "hello" {
		t.Errorf("user turn without an IDEContext: %q", got)
	}
}
