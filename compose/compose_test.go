package compose

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/sessions"
	"github.com/agentry-dev/agentry/transcript"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// settingsFor returns default settings for a fresh workspace and home.
func settingsFor(t *testing.T) *config.Settings {
	t.Helper()
	s := config.Defaults()
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Trusted = true
	return &s
}

// TestMaskingPersistsToTheStore: a session built from settings on the
// SQLite store masks old, large tool outputs; the masked responses reach
// the model and are written through, so a reopened store holds the masked
// view and the newest output intact.
func TestMaskingPersistsToTheStore(t *testing.T) {
	s := settingsFor(t)
	line := strings.Repeat("x", 98) + "\n"
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		writeFile(t, filepath.Join(s.Workspace, name), strings.Repeat(line, 2000))
	}
	b := newScript(
		callTurn("", fc("r1", "read_file", map[string]any{"file_path": "a.txt"})),
		callTurn("", fc("r2", "read_file", map[string]any{"file_path": "b.txt"})),
		callTurn("", fc("r3", "read_file", map[string]any{"file_path": "c.txt"})),
		textTurn("done"),
	)
	s.Session.Path = filepath.Join(t.TempDir(), "sessions.db")
	store, closeStore, err := OpenStore(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := FromSettings(t.Context(), s, Options{SessionID: "masked-1", Resolver: fixedResolver{B: b}, SessionService: store})
	if err != nil {
		t.Fatal(err)
	}
	evs := run(t, sess, "read the three files")
	if r := last(evs).AgentEnd.Reason; r != runtime.EndCompleted {
		t.Fatalf("reason %s, events %v", r, types(evs))
	}
	sess.Close()
	closeStore()

	// The last request carried a and b masked, c in full.
	reqs := b.Requests()
	outputs := func(contents []*genai.Content) map[string]string {
		out := map[string]string{}
		for _, c := range contents {
			for _, p := range c.Parts {
				if fr := p.FunctionResponse; fr != nil {
					o, _ := fr.Response["output"].(string)
					out[fr.ID] = o
				}
			}
		}
		return out
	}
	check := func(what string, got map[string]string) {
		t.Helper()
		for _, id := range []string{"r1", "r2"} {
			if !strings.HasPrefix(got[id], "<tool_output_masked>") {
				t.Errorf("%s: %s not masked: %.80q", what, id, got[id])
			}
		}
		if !strings.Contains(got["r3"], strings.Repeat("x", 98)) || strings.Contains(got["r3"], "tool_output_masked") {
			t.Errorf("%s: newest output changed: %.80q", what, got["r3"])
		}
	}
	check("last request", outputs(reqs[len(reqs)-1].Contents))

	reopened, err := sessions.OpenSQLite(context.Background(), s.Session.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	got, err := reopened.Get(context.Background(), &session.GetRequest{AppName: "agentry", UserID: "user", SessionID: "masked-1"})
	if err != nil {
		t.Fatal(err)
	}
	var stored []*genai.Content
	for ev := range got.Session.Events().All() {
		if ev.Content != nil {
			stored = append(stored, ev.Content)
		}
	}
	check("stored session", outputs(stored))

	// The transcript, found through the session's state, records the
	// prompt, a gemini message per response with its calls, and the masked
	// results.
	path, _ := got.Session.State().Get(runtime.StateTranscript)
	rec, err := transcript.Load(path.(string))
	if err != nil {
		t.Fatal(err)
	}
	if rec.SessionID != "masked-1" || rec.ProjectHash != transcript.ProjectHash(s.Workspace) || rec.Kind != "main" {
		t.Errorf("transcript metadata: %+v", rec)
	}
	var kinds []string
	results := map[string]string{}
	for _, m := range rec.Messages {
		kinds = append(kinds, m.Type)
		for _, tc := range m.ToolCalls {
			var parts []*genai.Part
			if err := json.Unmarshal(tc.Result, &parts); err != nil || len(parts) != 1 || parts[0].FunctionResponse == nil {
				t.Fatalf("tool call %s result %s: %v", tc.ID, tc.Result, err)
			}
			o, _ := parts[0].FunctionResponse.Response["output"].(string)
			results[tc.ID] = o
			if tc.Status != "success" || tc.Name != "read_file" || tc.Args["file_path"] == nil {
				t.Errorf("tool call record %+v", tc)
			}
		}
	}
	if d := cmp.Diff([]string{"user", "gemini", "gemini", "gemini", "gemini"}, kinds); d != "" {
		t.Errorf("transcript messages (-want +got):\n%s", d)
	}
	check("transcript", results)
	if last := rec.Messages[len(rec.Messages)-1]; string(last.Content) != `[{"text":"done"}]` || last.Tokens == nil || last.Tokens.Input != 10 || last.Model != "gemini-2.5-flash" {
		t.Errorf("last message %s tokens %+v model %q", last.Content, last.Tokens, last.Model)
	}
	if filepath.Dir(path.(string)) != filepath.Join(s.TempDir(), "chats") {
		t.Errorf("transcript at %s, want under %s", path, filepath.Join(s.TempDir(), "chats"))
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
