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
	for _, want := range []string{"user: first question", "gemini: first answer", "user: second question", "gemini: second answer"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
		}
	}
	transcripts, _ := filepath.Glob(filepath.Join(e.home, ".agentry", "tmp", "*", "chats", "session-*.jsonl"))
	if len(transcripts) != 1 {
		t.Errorf("transcripts after two runs of one session: %q", transcripts)
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
	if left, _ := filepath.Glob(filepath.Join(e.home, ".agentry", "tmp", "*", "chats", "session-*.jsonl")); len(left) != 0 {
		t.Errorf("delete left the transcript: %q", left)
	}
	if r := e.run("", "run", "--resume", "-p", "x"); r.code != 42 || !strings.Contains(r.stderr, "no stored session for workspace") {
		t.Errorf("--resume with nothing stored: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestRewind: `agentry sessions rewind ID --to MSG` drops that message and
// everything after it from the transcript and the stored history; the next
// resumed run sends only what was kept.
func TestRewind(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("first answer"), fakegemini.Text("second answer"), fakegemini.Text("third answer"))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	for _, prompt := range []string{"first question", "second question"} {
		if r := e.run("", "run", "-m", "gemini-2.5-flash", "--session-id", "rw-1", "-p", prompt); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", prompt, r.code, r.stderr)
		}
	}
	show := e.run("", "sessions", "show", "rw-1")
	var second string
	for _, line := range strings.Split(show.stdout, "\n") {
		if strings.HasSuffix(line, "] user: second question") {
			second = strings.TrimPrefix(strings.Fields(line)[0], "[")
			second = strings.TrimSuffix(second, "]")
		}
	}
	if second == "" {
		t.Fatalf("no message id for the second prompt in:\n%s", show.stdout)
	}
	if r := e.run("", "sessions", "rewind", "rw-1", "--to", "no-such-message"); r.code != 42 || !strings.Contains(r.stderr, "sessions show rw-1") {
		t.Errorf("rewind to an unknown message: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "sessions", "rewind", "rw-1"); r.code != 42 || !strings.Contains(r.stderr, "--to") {
		t.Errorf("rewind without --to: exit %d, stderr %q", r.code, r.stderr)
	}
	r := e.run("", "sessions", "rewind", "rw-1", "--to", second)
	if r.code != 0 || !strings.Contains(r.stdout, "2 messages kept") {
		t.Fatalf("rewind: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	show = e.run("", "sessions", "show", "rw-1")
	if strings.Contains(show.stdout, "second") || !strings.Contains(show.stdout, "gemini: first answer") {
		t.Errorf("after rewind, sessions show:\n%s", show.stdout)
	}
	if r := e.run("", "run", "-m", "gemini-2.5-flash", "--resume=rw-1", "-p", "third question"); r.code != 0 {
		t.Fatalf("resumed run: exit %d: %s", r.code, r.stderr)
	}
	var sent []string
	for _, c := range srv.Requests()[2].Body.Contents {
		for _, p := range c.Parts {
			if p.Text != "" && !strings.Contains(p.Text, "<session_context>") {
				sent = append(sent, c.Role+": "+p.Text)
			}
		}
	}
	want := []string{"user: first question", "model: first answer", "user: third question"}
	if strings.Join(sent, "|") != strings.Join(want, "|") {
		t.Errorf("the run after the rewind sent %q, want %q", sent, want)
	}
}
