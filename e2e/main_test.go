// Package e2e runs the agentry binary the way users and scripts do: built
// once, started in temporary workspaces with a temporary home and a clean
// environment, its stdout, stderr, files and exit code checked.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// binary is the agentry binary built for this test run.
var binary string

// repoRoot is the repository's root directory.
var repoRoot string

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Dir(filepath.Dir(file))
	dir, err := os.MkdirTemp("", "agentry-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "agentry")
	// Built as the README's Install section builds it: without cgo, so
	// that the binary is static (TestBinaryIsStatic checks it).
	build := exec.Command("go", "build", "-o", binary, "./cmd/agentry")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building agentry:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a hermetic environment: a temporary home, PATH, and nothing from
// the developer's machine (no API keys, no AGENTRY_* settings).
type env struct {
	t    *testing.T
	home string
	ws   string
	vars []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, home: t.TempDir(), ws: t.TempDir(), vars: []string{"PATH=" + os.Getenv("PATH")}}
}

func (e *env) set(kv ...string) { e.vars = append(e.vars, kv...) }

// writeFile writes a file under the workspace (or an absolute path).
func (e *env) writeFile(rel, content string) string {
	e.t.Helper()
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.ws, rel)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

type result struct {
	stdout, stderr string
	code           int
}

// cmd prepares an agentry command in the environment.
func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(binary, args...)
	c.Dir = e.ws
	c.Env = append([]string{"HOME=" + e.home}, e.vars...)
	return c
}

// run runs agentry to completion with a hang guard.
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	return e.runCmd(e.cmd(args...), stdin, args)
}

// runCmd runs c with stdin to its end, within a hang guard; args name it
// in the failure.
func (e *env) runCmd(c *exec.Cmd, stdin string, args []string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		<-done
		e.t.Fatalf("agentry %q hung; stderr:\n%s", args, errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: c.ProcessState.ExitCode()}
}

// replayFile writes a replay file of stream turns built from parts.
func (e *env) replayFile(turns ...[]map[string]any) string {
	e.t.Helper()
	var b strings.Builder
	for _, parts := range turns {
		line := map[string]any{"method": "generateContentStream", "response": []any{map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": parts},
				"finishReason": "STOP",
			}},
			"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		}}}
		j, err := json.Marshal(line)
		if err != nil {
			e.t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(e.t.TempDir(), "replay.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func text(s string) map[string]any { return map[string]any{"text": s} }

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"functionCall": map[string]any{"name": name, "args": args}}
}

// lines decodes JSON lines.
func lines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func ofType(ls []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range ls {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

func quickstart() string { return filepath.Join(repoRoot, "examples", "quickstart.jsonl") }
