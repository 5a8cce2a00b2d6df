package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/oauthtest"
	"github.com/agentry-dev/agentry/internal/termtest"
)

// TestMCPOAuthInteractive: on a terminal, a server with oauth.enabled
// walks its flow while the first session opens (the URL on the terminal,
// before the UI); its tool then runs in the conversation; /mcp auth walks
// the flow again from inside the UI.
func TestMCPOAuthInteractive(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	model := fakegemini.New(t)
	model.Enqueue(fakegemini.Call(oauthtest.ToolName, map[string]any{}), fakegemini.Text("The server said it."))
	e := newEnv(t)
	e.geminiEnv(model)
	settings, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"secure": map[string]any{"url": srv.MCPURL, "trust": true, "oauth": map[string]any{"enabled": true}},
	}})
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), string(settings))

	// Wide enough for the authorization URL on one line.
	tm := termtest.Start(t, termtest.Options{
		Command: []string{binary, "-m", "gemini-2.5-flash", "--trust-workspace"},
		Env:     e.environ(), Dir: e.ws, Cols: 480, Rows: 40,
	})
	authURL := regexp.MustCompile(regexp.QuoteMeta(srv.URL) + `/authorize\?\S+`)
	seen := map[string]bool{}
	browse := func() {
		t.Helper()
		var u string
		tm.WaitFor("a new authorization URL", func(screen string) bool {
			for _, found := range authURL.FindAllString(screen, -1) {
				if !seen[found] {
					u = found
					return true
				}
			}
			return false
		})
		seen[u] = true
		if status, body, err := oauthtest.Browse(t.Context(), u); err != nil || status != 200 {
			t.Fatalf("browser: %d %v\n%s", status, err, body)
		}
	}
	browse()
	tm.WaitText(promptReady)

	send(tm, "ask the server")
	tm.WaitText("The server said it.")
	if c := srv.Counts(); c.ToolCalls != 1 || c.Authorizations != 1 {
		t.Fatalf("server counts %+v", c)
	}

	send(tm, "/mcp auth secure")
	browse()
	tm.WaitText("Authorized secure; token stored in " + filepath.Join(e.home, ".agentry", "mcp-oauth", "secure.json"))
	if c := srv.Counts(); c.Authorizations != 2 {
		t.Fatalf("server counts after /mcp auth %+v", c)
	}
	b, err := os.ReadFile(filepath.Join(e.home, ".agentry", "mcp-oauth", "secure.json"))
	var stored struct {
		Token struct{ AccessToken, RefreshToken string }
	}
	if err != nil || json.Unmarshal(b, &stored) != nil || stored.Token.AccessToken == "" {
		t.Fatalf("token file: %v\n%s", err, b)
	}
	if s := tm.Scrollback(); strings.Contains(s, stored.Token.AccessToken) || strings.Contains(s, stored.Token.RefreshToken) {
		t.Errorf("a token is on the terminal:\n%s", s)
	}
}
