package e2e

import (
	"os"
	"path/filepath"
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
