package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// TestSessionContinuesAcrossRuns: the default SQLite store keeps the
// conversation, so a second run with the same --session-id sends the
// first run's exchange along with the new prompt.
func TestSessionContinuesAcrossRuns(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("The answer is 42."), fakegemini.Text("You asked about the answer."))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	for _, prompt := range []string{"what is the answer?", "what did I ask?"} {
		if r := e.run("", "run", "-m", "gemini-2.5-flash", "--session-id", "conv-1", "-p", prompt); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", prompt, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, ".agentry", "sessions.db")); err != nil {
		t.Errorf("no session store: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var texts []string
	for _, c := range reqs[1].Body.Contents {
		for _, p := range c.Parts {
			if p.Text != "" {
				texts = append(texts, c.Role+": "+p.Text)
			}
		}
	}
	want := map[string]bool{"user: what is the answer?": false, "model: The answer is 42.": false, "user: what did I ask?": false}
	for _, s := range texts {
		if _, ok := want[s]; ok {
			want[s] = true
		}
	}
	for s, seen := range want {
		if !seen {
			t.Errorf("second request lacks %q; it has %q", s, texts)
		}
	}
}

// TestResumeAndSessionsCommands: --resume continues this workspace's latest
// session; `agentry sessions` lists, shows and deletes; bad ids are input
// errors (exit 42) that say what to do.
func TestResumeAndSessionsCommands(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("first answer"), fakegemini.Text("second answer"))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	if r := e.run("", "run", "-m", "gemini-2.5-flash", "-p", "first question"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	list := e.run("", "sessions", "list")
	rows := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if list.code != 0 || len(rows) != 2 || !strings.HasPrefix(rows[0], "ID") {
		t.Fatalf("sessions list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	id := strings.Fields(rows[1])[0]

	if r := e.run("", "run", "-m", "gemini-2.5-flash", "--resume", "-p", "second question"); r.code != 0 {
		t.Fatalf("resumed run: exit %d: %s", r.code, r.stderr)
	}
	var sent []string
	for _, c := range srv.Requests()[1].Body.Contents {
		for _, p := range c.Parts {
			sent = append(sent, p.Text)
		}
	}
	if all := strings.Join(sent, "|"); !strings.Contains(all, "first question") || !strings.Contains(all, "first answer") {
		t.Errorf("the resumed run did not send the first exchange: %q", sent)
	}
	show := e.run("", "sessions", "show", id)
	for _, want := range []string{"user: first question", "model: first answer", "user: second question", "model: second answer"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
		}
	}
	if r := e.run("", "run", "--resume=no-such-id", "-p", "x"); r.code != 42 || !strings.Contains(r.stderr, "sessions list") {
		t.Errorf("--resume=no-such-id: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "run", "--resume="+id, "--session-id", "x", "-p", "x"); r.code != 42 || !strings.Contains(r.stderr, "both --resume and --session-id") {
		t.Errorf("--resume with --session-id: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "sessions", "delete", id); r.code != 0 {
		t.Errorf("delete: exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "sessions", "show", id); r.code != 42 {
		t.Errorf("show after delete: exit %d", r.code)
	}
	if r := e.run("", "run", "--resume", "-p", "x"); r.code != 42 || !strings.Contains(r.stderr, "no stored session for workspace") {
		t.Errorf("--resume with nothing stored: exit %d, stderr %q", r.code, r.stderr)
	}
}
