package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/internal/oauthtest"
)

// TestMCPOAuth: an MCP server behind OAuth. A headless run without a
// token says to run `agentry mcp auth NAME`; `agentry mcp auth` walks the
// flow with the test as the browser and stores the token 0600; a headless
// run then calls the server's tool with it; `mcp list` shows it and
// `--logout` deletes it.
func TestMCPOAuth(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	e := newEnv(t)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"secure": map[string]any{"url": srv.MCPURL, "trust": true},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))
	tokenFile := filepath.Join(e.home, ".agentry", "mcp-oauth", "secure.json")

	list := func() map[string]any {
		t.Helper()
		r := e.run("", "mcp", "list", "--json")
		if r.code != 0 {
			t.Fatalf("mcp list: exit %d\n%s", r.code, r.stderr)
		}
		var out struct{ Servers []map[string]any }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Servers) != 1 {
			t.Fatalf("mcp list --json: %v\n%s", err, r.stdout)
		}
		return out.Servers[0]
	}
	if l := list(); l["needsAuth"] != "yes" || l["transport"] != "http" || l["token"].(map[string]any)["state"] != "none" {
		t.Fatalf("before auth: %v", l)
	}

	replay := e.replayFile(
		[]map[string]any{call(oauthtest.ToolName, map[string]any{})},
		[]map[string]any{text("Done.")},
	)
	// Headless without a token: the server is left out, and why is said.
	r := e.run("", "run", "-m", "replay:"+replay, "--trust-workspace", "-o", "stream-json", "-p", "ask the server")
	if want := `mcp server "secure" needs OAuth authorization; run "agentry mcp auth secure"`; !strings.Contains(r.stderr, want) {
		t.Fatalf("headless run without a token: stderr lacks %q:\n%s", want, r.stderr)
	}

	// agentry mcp auth, with the test as the browser.
	c := e.cmd("mcp", "auth", "secure")
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	c.Stdout = &stdout
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, srv.URL+"/authorize?") {
				status, body, err := oauthtest.Browse(t.Context(), line)
				if err == nil && status != 200 {
					t.Errorf("browser got %d: %s", status, body)
				}
				if err != nil {
					done <- err
					return
				}
			}
		}
		io.Copy(io.Discard, stderr)
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		t.Fatal("agentry mcp auth hung")
	}
	if err := c.Wait(); err != nil {
		t.Fatalf("agentry mcp auth: %v\nstdout: %s", err, stdout.String())
	}
	if want := "Authorized secure; token stored in " + tokenFile; !strings.Contains(stdout.String(), want) {
		t.Fatalf("stdout %q lacks %q", stdout.String(), want)
	}
	for p, want := range map[string]os.FileMode{tokenFile: 0o600, filepath.Dir(tokenFile): 0o700} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %v", p, fi.Mode(), err, want)
		}
	}
	if l := list(); l["token"].(map[string]any)["state"] != "valid" {
		t.Fatalf("after auth: %v", l)
	}
	r = e.run("", "mcp", "list")
	if !regexp.MustCompile(`(?m)^secure +http +`+regexp.QuoteMeta(srv.MCPURL)+` +yes +valid until 20\d\d-`).MatchString(r.stdout) || r.code != 0 {
		t.Fatalf("mcp list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A headless run uses the stored token: the tool answers.
	r = e.run("", "run", "-m", "replay:"+replay, "--trust-workspace", "-o", "stream-json", "-p", "ask the server")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	var got string
	for _, ev := range ofType(lines(t, r.stdout), "tool_result") {
		if ev["status"] != "success" {
			t.Fatalf("tool result %v", ev)
		}
		got, _ = ev["output"].(string)
	}
	if !strings.Contains(got, oauthtest.ToolAnswer) {
		t.Fatalf("tool output %q\nstderr:\n%s", got, r.stderr)
	}
	if c := srv.Counts(); c.Authorizations != 1 || c.ToolCalls != 1 {
		t.Fatalf("server counts %+v", c)
	}

	r = e.run("", "mcp", "auth", "secure", "--logout")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed the stored OAuth token of secure") {
		t.Fatalf("--logout: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Fatalf("token file after --logout: %v", err)
	}
}
