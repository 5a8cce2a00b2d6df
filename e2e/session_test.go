package e2e

import (
	"fmt"
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
	if list.code != 0 || len(rows) != 2 || !strings.HasPrefix(rows[0], "#") {
		t.Fatalf("sessions list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	id := strings.Fields(rows[1])[1]

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
	for _, want := range []string{"user: first question", "gemini-2.5-flash: first answer", "user: second question", "gemini-2.5-flash: second answer"} {
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
	if strings.Contains(show.stdout, "second") || !strings.Contains(show.stdout, "gemini-2.5-flash: first answer") {
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

// TestFailedRunIsNotStored: a run that fails before anything of a
// conversation is stored (no credentials) leaves no session: it is not
// listed, and --resume (latest) continues the last real conversation.
func TestFailedRunIsNotStored(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("the answer")}, []map[string]any{text("again")})
	if r := e.run("", "run", "-m", "replay:"+replay, "-p", "a real question"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "-m", "gemini-2.5-flash", "-p", "no key"); r.code != 41 {
		t.Fatalf("without credentials: exit %d, want 41: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "-m", "gemini-2.5-flash", "--session-id", "named-1", "-p", "no key"); r.code != 41 {
		t.Fatalf("without credentials: exit %d, want 41: %s", r.code, r.stderr)
	}
	list := e.run("", "sessions", "list")
	rows := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(rows) != 2 || !strings.Contains(rows[1], "a real question") {
		t.Fatalf("sessions list: want only the real conversation:\n%s%s", list.stdout, list.stderr)
	}
	if r := e.run("", "sessions", "show", "named-1"); r.code != 42 {
		t.Errorf("the failed run's session is stored: show exit %d\n%s", r.code, r.stdout)
	}
	transcripts, _ := filepath.Glob(filepath.Join(e.home, ".agentry", "tmp", "*", "chats", "session-*.jsonl"))
	if len(transcripts) != 1 {
		t.Errorf("transcripts: %q, want the real conversation's alone", transcripts)
	}
	r := e.run("", "run", "-m", "replay:"+replay, "--resume", "-o", "json", "-p", "and now?")
	if r.code != 0 {
		t.Fatalf("--resume: exit %d: %s", r.code, r.stderr)
	}
	list = e.run("", "sessions", "list")
	if rows := strings.Split(strings.TrimSpace(list.stdout), "\n"); len(rows) != 2 || strings.Fields(rows[1])[4] != "2" {
		t.Errorf("--resume did not continue the real conversation (2 turns):\n%s", list.stdout)
	}
}

// TestSessionsListAndShow: the list numbers the sessions oldest first (the
// numbers -r takes), with their turns and first prompt on one line, cut
// to fit; show names the model that answered each message, prints tool
// arguments as JSON and folds long content.
func TestSessionsListAndShow(t *testing.T) {
	e := newEnv(t)
	var long strings.Builder
	for i := range 30 {
		fmt.Fprintf(&long, "line %d of the answer\n", i+1)
	}
	first := e.replayFile(
		[]map[string]any{call("write_file", map[string]any{"file_path": "a.txt", "content": "<b> & c\n"})},
		[]map[string]any{text(long.String())},
	)
	second := e.replayFile([]map[string]any{text("from the second model")})
	prompt := "Write a.txt,\n  then   explain\tit in a long answer that runs past the width of the preview column"
	if r := e.run("", "run", "-m", "replay:"+first, "--yolo", "--session-id", "s-1", "-p", prompt); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "-m", "replay:"+second, "--resume=s-1", "-p", "and again"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "-m", "replay:"+second, "--session-id", "s-2", "-p", "another"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	list := e.run("", "sessions", "list")
	rows := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(rows) != 3 {
		t.Fatalf("sessions list:\n%s%s", list.stdout, list.stderr)
	}
	if got := strings.Fields(rows[0]); strings.Join(got, " ") != "# ID UPDATED TURNS FIRST PROMPT" {
		t.Errorf("header %q", rows[0])
	}
	wantPreview := "Write a.txt, then explain it in a long answer t..."
	for i, want := range []struct{ n, id, turns, preview string }{{"1", "s-1", "2", wantPreview}, {"2", "s-2", "1", "another"}} {
		f := strings.Fields(rows[i+1])
		if len(f) < 6 || f[0] != want.n || f[1] != want.id || f[4] != want.turns || strings.Join(f[5:], " ") != want.preview {
			t.Errorf("row %d = %q, want number %s, id %s, %s turns, preview %q", i+1, rows[i+1], want.n, want.id, want.turns, want.preview)
		}
	}

	show := e.run("", "sessions", "show", "s-1")
	if show.code != 0 {
		t.Fatalf("show: exit %d: %s", show.code, show.stderr)
	}
	for _, want := range []string{
		"] replay:" + first + ":\n",
		`    write_file {"content":"<b> & c\n","file_path":"a.txt"} -> success` + "\n",
		"] replay:" + first + ": line 1 of the answer\n    line 2 of the answer\n",
		"\n    line 20 of the answer\n",
		"\n    … 10 more lines (agentry sessions show --full s-1 prints them)\n",
		"] replay:" + second + ": from the second model\n",
	} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, show.stdout)
		}
	}
	if n := strings.Count(show.stdout, " of the answer"); n != 20 {
		t.Errorf("the folded answer shows %d lines, want 20", n)
	}
	full := e.run("", "sessions", "show", "--full", "s-1")
	if n := strings.Count(full.stdout, " of the answer"); n != 30 || strings.Contains(full.stdout, "more lines") {
		t.Errorf("--full shows %d lines, want 30:\n%s", n, full.stdout)
	}
}

// TestOneSessionNumbering: "sessions list" and --list-sessions number the
// sessions alike, by the start of their latest run (gemini-cli's order:
// a resumed session moves to the end and is the latest), and -r N takes
// that number.
func TestOneSessionNumbering(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("ok")})
	for _, id := range []string{"n-1", "n-2", "n-3"} {
		if r := e.run("", "run", "-m", "replay:"+replay, "--session-id", id, "-p", "prompt of "+id); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}
	if r := e.run("", "run", "-m", "replay:"+replay, "-r", "1", "-p", "again"); r.code != 0 {
		t.Fatalf("-r 1: exit %d: %s", r.code, r.stderr)
	}
	want := []string{"n-2", "n-3", "n-1"}
	list := e.run("", "sessions", "list")
	rows := strings.Split(strings.TrimSpace(list.stdout), "\n")[1:]
	listed := e.run("", "--list-sessions")
	var gemini []string
	for _, l := range strings.Split(listed.stdout, "\n") {
		if i := strings.LastIndex(l, "["); i >= 0 && strings.HasSuffix(l, "]") {
			gemini = append(gemini, l[i+1:len(l)-1])
		}
	}
	for i, id := range want {
		if i >= len(rows) || strings.Fields(rows[i])[1] != id || i >= len(gemini) || gemini[i] != id {
			t.Fatalf("want %v in both lists\nsessions list:\n%s\n--list-sessions:\n%s", want, list.stdout, listed.stdout)
		}
	}
	r := e.run("", "run", "-m", "replay:"+replay, "-r", "2", "-o", "json", "-p", "which?")
	if r.code != 0 || !strings.Contains(r.stdout, `"session_id": "n-3"`) {
		t.Errorf("-r 2 did not resume n-3: exit %d\n%s", r.code, r.stdout)
	}
}
