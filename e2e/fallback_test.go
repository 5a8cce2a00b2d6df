package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// TestFallbackInStreamJSON: the configured model is out of daily quota; a
// silent fallback chain in the user's settings moves the run to the next
// model, stream-json shows the fallback as a warning, and the run
// completes on the fallback model with exit code 0.
func TestFallbackInStreamJSON(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("Answer ", "from flash."))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"model": {"fallbackChains": [[
		{"model": "gemini-2.5-pro", "actions": {"terminal": "silent"}},
		{"model": "gemini-2.5-flash", "lastResort": true, "actions": {"terminal": "silent"}}
	]]}}`)
	r := e.run("", "run", "-m", "gemini-2.5-pro", "-o", "stream-json", "-p", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	ls := lines(t, r.stdout)
	warnings := ofType(ls, "error")
	if len(warnings) != 1 || warnings[0]["severity"] != "warning" ||
		!strings.Contains(warnings[0]["message"].(string), "gemini-2.5-pro") ||
		!strings.Contains(warnings[0]["message"].(string), "fallback model gemini-2.5-flash") {
		t.Errorf("warnings = %v", warnings)
	}
	var text string
	for _, m := range ofType(ls, "message") {
		if m["role"] == "assistant" {
			text += m["content"].(string)
		}
	}
	if text != "Answer from flash." {
		t.Errorf("assistant text = %q", text)
	}
	res := ofType(ls, "result")
	if len(res) != 1 || res[0]["status"] != "success" {
		t.Fatalf("result = %v", res)
	}
	var got []string
	for _, req := range srv.Requests() {
		got = append(got, req.Model)
	}
	if diff := cmp.Diff([]string{"gemini-2.5-pro", "gemini-2.5-flash"}, got); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
	stats, _ := res[0]["stats"].(map[string]any)
	if models, _ := stats["models"].(map[string]any); models != nil {
		if _, ok := models["gemini-2.5-flash"]; !ok {
			t.Errorf("stats models = %v", models)
		}
	}
}

// TestEveryModelOutOfQuota: with nowhere to fall back, the run fails with
// gemini-cli's error class and exit code 1, in JSON.
func TestEveryModelOutOfQuota(t *testing.T) {
	srv := fakegemini.New(t)
	srv.EnqueueFor("gemini-2.5-flash", fakegemini.RateLimitPerDay())
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	r := e.run("", "run", "-m", "gemini-2.5-flash", "-o", "json", "-p", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("output %q: %v", r.stdout, err)
	}
	errObj, _ := out["error"].(map[string]any)
	if errObj["type"] != "TerminalQuotaError" || !strings.Contains(errObj["message"].(string), "quota") {
		t.Errorf("error = %v", errObj)
	}
}
