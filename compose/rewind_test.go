package compose

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/transcript"
	"github.com/google/go-cmp/cmp"
)

// TestSessionRewind rewinds a live session built from settings to its
// second prompt: the transcript and the stored history keep the first
// exchange, its tool call rebuilt as a function call and its response,
// session_update is emitted, and the next prompt builds on what was kept.
func TestSessionRewind(t *testing.T) {
	s := settingsFor(t)
	writeFile(t, filepath.Join(s.Workspace, "a.txt"), "alpha\n")
	b := newScript(
		callTurn("looking", fc("r1", "read_file", map[string]any{"file_path": "a.txt"})),
		textTurn("a.txt says alpha"),
		textTurn("second answer"),
		textTurn("third answer"),
	)
	s.Session.Path = filepath.Join(t.TempDir(), "sessions.db")
	store, closeStore, err := OpenStore(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	sess, err := FromSettings(t.Context(), s, Options{SessionID: "rw", Resolver: fixedResolver{B: b}, SessionService: store})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	run(t, sess, "read a.txt")
	run(t, sess, "second question")

	live, err := runtime.GetSession(t.Context(), store, "rw")
	if err != nil {
		t.Fatal(err)
	}
	path, _ := live.State().Get(runtime.StateTranscript)
	rec, err := transcript.Load(path.(string))
	if err != nil {
		t.Fatal(err)
	}
	var second string
	for _, m := range rec.Messages {
		if m.Type == transcript.TypeUser && strings.Contains(string(m.Content), "second question") {
			second = m.ID
		}
	}
	if _, err := sess.Rewind(t.Context(), "nope"); !errors.Is(err, runtime.ErrNoMessage) {
		t.Errorf("Rewind(unknown id) = %v, want ErrNoMessage", err)
	}
	var updates []runtime.Event
	unsub := sess.Subscribe(func(ev runtime.Event) {
		if ev.Type == runtime.EventSessionUpdate {
			updates = append(updates, ev)
		}
	})
	res, err := sess.Rewind(t.Context(), second)
	unsub()
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 3 || res.Events != 4 {
		t.Errorf("rewind kept %+v, want 3 messages (prompt, call, answer) and 4 events", res)
	}
	if len(updates) != 1 || updates[0].SessionUpdate.Config["rewoundTo"] != second {
		t.Errorf("session_update events after the rewind: %+v", updates)
	}

	run(t, sess, "third question")
	reqs := b.Requests()
	got := summarize(reqs[len(reqs)-1].Contents)
	want := []string{"read a.txt", "looking", "fr:read_file", "a.txt says alpha", "third question"}
	// The content processor puts the session context in front of the
	// first prompt, as the first part of its turn.
	if c := reqs[len(reqs)-1].Contents[0]; len(c.Parts) == 2 {
		got[0] = c.Parts[1].Text
	}
	if len(got) > len(want) {
		got = got[len(got)-len(want):]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the request after the rewind (-want +got):\n%s", d)
	}
	last := reqs[len(reqs)-1].Contents
	var fcSeen bool
	for _, c := range last {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.FunctionCall.ID == "r1" && p.FunctionCall.Args["file_path"] == "a.txt" {
				fcSeen = true
			}
		}
	}
	if !fcSeen {
		t.Errorf("the rebuilt history lost the function call r1")
	}
}
