package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// A gemini-cli user's switch to agentry, run as that user runs it: the
// binary with a fresh HOME holding gemini-cli's files.

// userTexts returns the text parts of the user contents of a request.
func userTexts(req fakegemini.Request) []string {
	var out []string
	for _, c := range req.Body.Contents {
		if c.Role != "user" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// containsRun reports whether want appears in got as consecutive items.
func containsRun(got, want []string) bool {
	for i := 0; i+len(want) <= len(got); i++ {
		if slices.Equal(got[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// TestRootPromptRunsHeadless: `agentry -p` is `agentry run -p`; a bare
// `agentry` prints its help; a stray word is an unknown command.
func TestRootPromptRunsHeadless(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("Hello from the root command.")})
	root := e.run("", "-m", "replay:"+replay, "-o", "json", "-p", "hi")
	run := e.run("", "run", "-m", "replay:"+replay, "-o", "json", "-p", "hi")
	for name, r := range map[string]result{"agentry -p": root, "agentry run -p": run} {
		var out map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out["response"] != "Hello from the root command." {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, r.code, r.stdout, r.stderr)
		}
	}
	if r := e.run(""); r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "--prompt") {
		t.Errorf("bare agentry: exit %d\nstdout:\n%s", r.code, r.stdout)
	}
	if r := e.run("", "sesions"); r.code != 42 || !strings.Contains(r.stderr, `unknown command "sesions"`) || !strings.Contains(r.stderr, "did you mean sessions?") {
		t.Errorf("agentry sesions: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestAtPathReferences: @path references in -p are read and sent as
// gemini-cli sends them; a missing path, or one outside the workspace,
// is exit 42 naming it.
func TestAtPathReferences(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Text("Read it."))
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	e.writeFile("notes.txt", "first\nsecond\n")
	e.writeFile("pkg/lib.go", "package pkg\n")
	lib := t.TempDir()
	e.writeFile(filepath.Join(lib, "shared.md"), "shared notes\n")

	r := e.run("", "-m", "gemini-2.5-flash", "--include-directories", lib, "-p", "Summarise @notes.txt, @pkg and @shared.md")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	want := []string{
		"Summarise @notes.txt, @pkg/** and @shared.md",
		"\n--- Content from referenced files ---",
		"\nContent from @notes.txt:\n", "first\nsecond",
		"\nContent from @pkg/lib.go:\n", "package pkg",
	}
	got := userTexts(reqs[0])
	if !containsRun(got, want) || !slices.Contains(got, "\nContent from @shared.md:\n") || !slices.Contains(got, "shared notes") || got[len(got)-1] != "\n--- End of content ---" {
		t.Errorf("user parts =\n%q\nwant them to include\n%q", got, want)
	}

	outside := e.writeFile(filepath.Join(t.TempDir(), "secret.txt"), "secret")
	for prompt, msg := range map[string]string{
		"Explain @missing.go":   "@missing.go: no such file or directory in the workspace",
		"Explain @" + outside:   "@" + outside + ": outside the workspace",
		"Explain @../secret.go": "@../secret.go: outside the workspace",
	} {
		r := e.run("", "-m", "gemini-2.5-flash", "-p", prompt)
		if r.code != 42 || !strings.Contains(r.stderr, msg) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant 42 and %q", prompt, r.code, r.stderr, msg)
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("refused prompts reached the model: %d requests", n)
	}
}

// TestResumeAndListSessions: --list-sessions numbers the workspace's
// sessions oldest first; -r takes a space-separated number, id or
// "latest", as gemini-cli's does.
func TestResumeAndListSessions(t *testing.T) {
	e := newEnv(t)
	replay := e.replayFile([]map[string]any{text("ok")})
	if r := e.run("", "--list-sessions"); r.code != 0 || r.stdout != "No previous sessions found for this project.\n" {
		t.Fatalf("empty list: exit %d\nstdout: %q\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	ids := map[string]string{}
	for _, prompt := range []string{"first task", "second task"} {
		r := e.run("", "run", "-m", "replay:"+replay, "-o", "json", "-p", prompt)
		var out map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("%s: exit %d\n%s\n%s", prompt, r.code, r.stdout, r.stderr)
		}
		ids[prompt] = out["session_id"].(string)
	}
	r := e.run("", "--list-sessions")
	line := regexp.MustCompile(`^  (\d)\. (.*) \((Just now|\d+ minutes? ago)\) \[(.*)\]$`)
	ls := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(ls) != 4 || ls[0] != "" || ls[1] != "Available sessions for this project (2):" {
		t.Fatalf("list: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for i, prompt := range []string{"first task", "second task"} {
		m := line.FindStringSubmatch(ls[2+i])
		if m == nil || m[1] != string(rune('1'+i)) || m[2] != prompt || m[4] != ids[prompt] {
			t.Errorf("line %d = %q, want %d. %s [%s]", i+1, ls[2+i], i+1, prompt, ids[prompt])
		}
	}

	resumed := func(args ...string) string {
		t.Helper()
		r := e.run("", append([]string{"-m", "replay:" + replay, "-o", "json"}, args...)...)
		var out map[string]any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
			t.Fatalf("%q: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		return out["session_id"].(string)
	}
	if got := resumed("-r", "1", "-p", "more"); got != ids["first task"] {
		t.Errorf("-r 1 resumed %s, want the first session %s", got, ids["first task"])
	}
	// The first session was just updated: it is now the latest, and keeps
	// its number.
	if got := resumed("-r", "latest", "-p", "more"); got != ids["first task"] {
		t.Errorf("-r latest resumed %s, want %s", got, ids["first task"])
	}
	if got := resumed("-p", "more", "-r", ids["second task"]); got != ids["second task"] {
		t.Errorf("-r ID resumed %s, want %s", got, ids["second task"])
	}
	if got := resumed("-p", "more", "--resume"); got != ids["second task"] {
		t.Errorf("bare --resume resumed %s, want the latest, %s", got, ids["second task"])
	}
	if got := resumed("--resume=2", "-p", "more"); got != ids["second task"] {
		t.Errorf("--resume=2 resumed %s, want %s", got, ids["second task"])
	}
	if r := e.run("", "run", "-m", "replay:"+replay, "-r", "3", "-p", "x"); r.code != 42 || !strings.Contains(r.stderr, `no session "3"`) || !strings.Contains(r.stderr, "--list-sessions") {
		t.Errorf("-r 3: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestGeminiFiles: gemini-cli's settings, .env, GEMINI_MODEL, trust file
// and trust variable, read from a fresh HOME.
func TestGeminiFiles(t *testing.T) {
	t.Run("settings and .env", func(t *testing.T) {
		srv := fakegemini.New(t)
		srv.EnqueueFor("gemini-2.5-pro", fakegemini.Text("pro answer"))
		e := newEnv(t)
		e.writeFile(filepath.Join(e.home, ".gemini", "settings.json"), `{
		  "security": {"auth": {"selectedType": "gemini-api-key"}},
		  "general": {"previewFeatures": true},
		  "model": {"name": "gemini-2.5-pro"}
		}`)
		e.writeFile(filepath.Join(e.home, ".gemini", ".env"), "GEMINI_API_KEY="+fakegemini.DefaultAPIKey+"\nGOOGLE_GEMINI_BASE_URL="+srv.URL+"\n")
		r := e.run("", "-p", "hi")
		if r.code != 0 || r.stdout != "pro answer\n" {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		warn := "ignoring gemini-cli settings agentry does not share: general.previewFeatures, security.auth"
		if strings.Count(r.stderr, "[WARNING]") != 1 || !strings.Contains(r.stderr, warn) {
			t.Errorf("stderr:\n%s\nwant one warning with %q", r.stderr, warn)
		}
	})
	t.Run("GEMINI_MODEL", func(t *testing.T) {
		srv := fakegemini.New(t)
		srv.EnqueueFor("gemini-2.5-flash-lite", fakegemini.Text("lite answer"))
		e := newEnv(t)
		e.writeFile(filepath.Join(e.home, ".gemini", "settings.json"), `{"model": {"name": "gemini-2.5-pro"}}`)
		e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srv.URL, "GEMINI_MODEL=gemini-2.5-flash-lite")
		if r := e.run("", "-p", "hi"); r.code != 0 || r.stdout != "lite answer\n" {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("trustedFolders.json and GEMINI_CLI_TRUST_WORKSPACE", func(t *testing.T) {
		e := newEnv(t)
		replay := e.replayFile([]map[string]any{text("ok")}, []map[string]any{text("ok")}, []map[string]any{text("ok")})
		e.writeFile("GEMINI.md", "Project rules.\n")
		ws, err := filepath.EvalSymlinks(e.ws)
		if err != nil {
			t.Fatal(err)
		}
		// Untrusted: the context file is skipped, with a warning saying how
		// to trust the workspace.
		r := e.run("", "-m", "replay-nonstrict:"+replay, "-p", "hi")
		if r.code != 0 || !strings.Contains(r.stderr, "project context not read, the workspace is not trusted: "+filepath.Join(ws, "GEMINI.md")) ||
			!strings.Contains(r.stderr, "trustedFolders.json") {
			t.Errorf("untrusted: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		e.writeFile(filepath.Join(e.home, ".gemini", "trustedFolders.json"), `{"`+ws+`": "TRUST_FOLDER"}`)
		if r := e.run("", "-m", "replay-nonstrict:"+replay, "-p", "hi"); r.code != 0 || strings.Contains(r.stderr, "not trusted") {
			t.Errorf("trusted by trustedFolders.json: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
		e.writeFile(filepath.Join(e.home, ".gemini", "trustedFolders.json"), `{"`+ws+`": "DO_NOT_TRUST"}`)
		e.set("GEMINI_CLI_TRUST_WORKSPACE=true")
		if r := e.run("", "-m", "replay-nonstrict:"+replay, "-p", "hi"); r.code != 0 || strings.Contains(r.stderr, "not trusted") {
			t.Errorf("trusted by GEMINI_CLI_TRUST_WORKSPACE: exit %d\nstderr:\n%s", r.code, r.stderr)
		}
	})
}

// TestMisspeltAgentryVariable: a misspelt AGENTRY_* variable is exit 52,
// naming it and the variable meant.
func TestMisspeltAgentryVariable(t *testing.T) {
	e := newEnv(t)
	e.set("AGENTRY_APROVAL_MODE=yolo")
	r := e.run("", "-p", "hi")
	if r.code != 52 || !strings.Contains(r.stderr, "AGENTRY_APROVAL_MODE: unknown variable") || !strings.Contains(r.stderr, "did you mean AGENTRY_APPROVAL_MODE?") {
		t.Errorf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestVertexAI: express mode (GOOGLE_API_KEY, no project) reaches Vertex
// AI's publisher model path; without credentials the run exits 41; with
// both keys the warning names the key used, and the genai client's
// contrary warning is not shown.
func TestVertexAI(t *testing.T) {
	srv := fakegemini.New(t, fakegemini.WithAPIKey("google-key"))
	srv.Enqueue(fakegemini.Text("vertex answer"))
	e := newEnv(t)
	e.set("GOOGLE_GENAI_USE_VERTEXAI=true", "GOOGLE_API_KEY=google-key", "GEMINI_API_KEY=gemini-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	r := e.run("", "-m", "gemini-2.5-flash", "-p", "hi")
	if r.code != 0 || r.stdout != "vertex answer\n" {
		t.Fatalf("express mode: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.HasPrefix(reqs[0].Path, "/v1beta1/publishers/google/models/gemini-2.5-flash:") {
		t.Errorf("requests = %+v", reqs)
	}
	if !strings.Contains(r.stderr, "both GEMINI_API_KEY and GOOGLE_API_KEY are set; Vertex AI (GOOGLE_GENAI_USE_VERTEXAI) uses GOOGLE_API_KEY") ||
		strings.Contains(r.stderr, "Both GOOGLE_API_KEY and GEMINI_API_KEY") {
		t.Errorf("stderr:\n%s", r.stderr)
	}

	none := newEnv(t)
	none.set("GOOGLE_GENAI_USE_VERTEXAI=true", "GEMINI_API_KEY=gemini-key")
	r = none.run("", "-m", "gemini-2.5-flash", "-o", "json", "-p", "hi")
	if r.code != 41 || !strings.Contains(r.stdout, "GOOGLE_API_KEY (express mode)") {
		t.Errorf("without credentials: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
