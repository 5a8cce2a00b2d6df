package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// TestRetryNoticeOnStderr: a rate-limited call is retried with one notice
// on stderr, in gemini-cli's words ("Attempt 1 failed: … Retrying after
// …ms..."), in text and stream-json; stdout carries only the answer. The
// server asks for 1 ms, so the run does not wait.
func TestRetryNoticeOnStderr(t *testing.T) {
	for _, format := range []string{"text", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			srv := fakegemini.New(t)
			srv.Enqueue(fakegemini.RateLimitPerMinute(time.Millisecond), fakegemini.Text("ok"))
			e := newEnv(t)
			e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
			r := e.run("", "run", "-m", "gemini-2.5-flash", "-o", format, "-p", "hello")
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			notice := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if len(notice) != 1 || !strings.HasPrefix(notice[0], "Attempt 1 failed: You exceeded your current quota") ||
				!strings.HasSuffix(notice[0], "ms...") || !strings.Contains(notice[0], ". Retrying after ") {
				t.Errorf("stderr = %q, want one retry notice", r.stderr)
			}
			if strings.Contains(r.stdout, "Attempt") {
				t.Errorf("the notice reached stdout:\n%s", r.stdout)
			}
			if format == "text" && r.stdout != "ok\n" {
				t.Errorf("stdout = %q", r.stdout)
			}
		})
	}
}
