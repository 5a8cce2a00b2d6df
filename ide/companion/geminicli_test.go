package companion_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/internal/fakegemini"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// geminiCLI is gemini-cli's executable, from AGENTRY_TEST_GEMINI_CLI
// (.ci/run installs the pinned version); without it the test fails under
// CI and is skipped elsewhere.
func geminiCLI(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTRY_TEST_GEMINI_CLI")
	if bin == "" {
		msg := "AGENTRY_TEST_GEMINI_CLI is not set: install gemini-cli at the version .ci/run pins and set it to DIR/node_modules/.bin/gemini (bash .ci/run does both)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("AGENTRY_TEST_GEMINI_CLI=%s: %v", bin, err)
	}
	return bin
}

// call is one MCP message a client sent, as the golden file records it.
type call struct {
	Method  string   `json:"method"`
	Tool    string   `json:"tool,omitempty"`
	ArgKeys []string `json:"argKeys,omitempty"`
}

// recorder is a receiving middleware that records the calls.
type recorder struct {
	mu    sync.Mutex
	calls []call
	log   []string
}

func (r *recorder) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := call{Method: method}
		if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p.ClientInfo != nil {
			r.log = append(r.log, fmt.Sprintf("initialize: protocolVersion %s, client %s %s", p.ProtocolVersion, p.ClientInfo.Name, p.ClientInfo.Version))
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			c.Tool = p.Name
			var args map[string]json.RawMessage
			_ = json.Unmarshal(p.Arguments, &args)
			for k := range args {
				c.ArgKeys = append(c.ArgKeys, k)
			}
			slices.Sort(c.ArgKeys)
		}
		r.mu.Lock()
		r.calls = append(r.calls, c)
		r.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (r *recorder) get() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// TestGeminiCLI: gemini-cli 0.61.0 runs interactively (in a pty) as a
// child of this test, which stands in for the IDE: the discovery file
// names this process, and GEMINI_CLI_IDE_PID points gemini-cli at it (its
// own process-tree walk would stop at the test binary's shell-less
// ancestry). Its IDE mode is on, its model the fake Gemini server, whose
// first answer calls write_file. gemini-cli finds the companion,
// authenticates, calls openDiff; the test accepts with other content;
// gemini-cli writes what was accepted. The MCP calls gemini-cli made are
// testdata/gemini-cli-calls.golden.json.
func TestGeminiCLI(t *testing.T) {
	gemini := geminiCLI(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	rec := &recorder{}
	ed := newEditor()
	srv, err := companion.New(companion.Config{
		Workspace:  []string{ws},
		IDEPID:     os.Getpid(),
		Editor:     ed,
		Dir:        filepath.Join(tmp, "gemini", "ide"),
		Middleware: []mcp.Middleware{rec.middleware},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	target := filepath.Join(ws, "a.txt")
	fake := fakegemini.New(t, fakegemini.AllowUnused())
	fake.Enqueue(fakegemini.Parts(&genai.Part{
		FunctionCall:     &genai.FunctionCall{Name: "write_file", Args: map[string]any{"file_path": target, "content": "proposed\n"}},
		ThoughtSignature: []byte("signature"),
	}))
	fake.Enqueue(fakegemini.Text("Written."))

	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false},` +
		` "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},` +
		` "ide": {"enabled": true, "hasSeenNudge": true}}`
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	// No first-run prompt to set up the terminal's keys.
	if err := os.WriteFile(filepath.Join(home, ".gemini", "state.json"), []byte(`{"terminalSetupPromptShown": true}`), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, gemini, "-m", "gemini-2.5-flash", "-i", "Write a.txt.")
	c.Dir = ws
	c.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "TERM=xterm-256color",
		"TERM_PROGRAM=vscode", "GEMINI_CLI_IDE_PID=" + itoa(os.Getpid()),
		"GEMINI_API_KEY=" + fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL=" + fake.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		// In a container (/.dockerenv, as on CI's machines) gemini-cli
		// dials host.docker.internal instead of 127.0.0.1 unless it is
		// told the IDE shares the container.
		"REMOTE_CONTAINERS=true",
	}, srv.Env()...)
	f, err := pty.StartWithSize(c, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	var screen lockedBuf
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&screen, f); close(copied) }()
	defer func() {
		_ = c.Process.Kill()
		_ = c.Wait()
		f.Close()
		<-copied
	}()

	var opened [2]string
	select {
	case opened = <-ed.opened:
	case <-ctx.Done():
		t.Fatalf("gemini-cli sent no openDiff; calls %+v\nscreen:\n%s", rec.get(), screen.String())
	}
	if opened != [2]string{target, "proposed\n"} {
		t.Fatalf("openDiff %q", opened)
	}
	const accepted = "accepted, as the user edited it\n"
	if err := srv.AcceptDiff(target, accepted); err != nil {
		t.Fatal(err)
	}
	// The model's second request follows the tool's result: the file is
	// written by then.
	if _, err := waitModelCalls(ctx, fake, 2); err != nil {
		t.Fatalf("gemini-cli's second model request: %v\nscreen:\n%s", err, screen.String())
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != accepted {
		t.Errorf("a.txt = %q, %v; want the accepted content %q", b, err, accepted)
	}

	got := rec.get()
	rec.mu.Lock()
	for _, l := range rec.log {
		t.Log(l)
	}
	rec.mu.Unlock()
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	golden := filepath.Join("testdata", "gemini-cli-calls.golden.json")
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("gemini-cli's MCP calls (-update rewrites %s):\n got %s\nwant %s", golden, out, want)
	}
}

// waitModelCalls waits for n generate requests (count-tokens calls and the
// like are not counted).
func waitModelCalls(ctx context.Context, fake *fakegemini.Server, n int) ([]fakegemini.Request, error) {
	for have := n; ; have++ {
		reqs, err := fake.WaitRequests(ctx, have)
		if err != nil {
			return nil, err
		}
		var calls []fakegemini.Request
		for _, r := range reqs {
			if r.Method == fakegemini.MethodStream || r.Method == fakegemini.MethodGenerate {
				calls = append(calls, r)
			}
		}
		if len(calls) >= n {
			return calls, nil
		}
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
