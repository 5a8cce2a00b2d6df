// Command capture records what gemini-cli 0.61.0 does in the scripted
// scenarios agentry's parity tests compare against; its output is the
// fixtures in ../ (see ../README.md). It runs gemini-cli headless with a
// fresh HOME in a fresh workspace holding three.txt, either replaying a
// --fake-responses file or pointed (GOOGLE_GEMINI_BASE_URL) at a small
// scripted Gemini API server on loopback that records every request.
//
//	go run ./testdata/gemini-cli/capture [-gemini PATH] [-out DIR]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// reply is one scripted answer of the server: SSE chunks, or an error.
type reply struct {
	chunks []string // JSON GenerateContentResponse chunks
	status int      // an error reply's HTTP status
	body   string   // an error reply's body
}

// scenario is one gemini-cli run.
type scenario struct {
	name    string
	formats []string
	fake    string  // a --fake-responses file in the fixture directory
	replies []reply // else the server's script
}

func chunk(parts string, finish string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return `{"candidates":[{"content":{"role":"model","parts":[` + parts + `]}` + f + `,"index":0}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":5,"totalTokenCount":105}}`
}

var (
	safety   = reply{chunks: []string{`{"candidates":[{"finishReason":"SAFETY","index":0}]}`}}
	rate2s   = reply{status: 429, body: `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 2s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaDimensions":{"location":"global","model":"gemini-2.5-flash"},"quotaValue":"10"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`}
	answer   = reply{chunks: []string{chunk(`{"text":"ok"}`, "STOP")}}
	scenarii = []scenario{
		{name: "tools", formats: []string{"stream-json", "json", "text"}, fake: "tools.jsonl"},
		{name: "safety", formats: []string{"stream-json", "json", "text"}, replies: []reply{safety, safety, safety, safety}},
		{name: "ratelimit", formats: []string{"stream-json"}, replies: []reply{rate2s, answer}},
		{name: "thinking-only", formats: []string{"stream-json"}, replies: []reply{
			{chunks: []string{chunk(`{"text":"hmm","thought":true}`, "STOP")}}, answer}},
		{name: "thought", formats: []string{"stream-json"}, replies: []reply{
			{chunks: []string{
				chunk(`{"text":"thinking hard","thought":true,"thoughtSignature":"c2lnMQ=="}`, ""),
				chunk(`{"functionCall":{"name":"read_file","args":{"file_path":"three.txt"}},"thoughtSignature":"c2lnMg=="}`, "STOP"),
			}}, answer}},
	}
)

func main() {
	gemini := flag.String("gemini", filepath.Join(os.Getenv("HOME"), ".cache/agentry-ci/gemini-cli-0.61.0/node_modules/.bin/gemini"), "the gemini-cli executable")
	out := flag.String("out", "testdata/gemini-cli", "the fixture directory")
	only := flag.String("only", "", "run only this scenario")
	flag.Parse()
	for _, sc := range scenarii {
		if *only != "" && sc.name != *only {
			continue
		}
		for _, format := range sc.formats {
			if err := capture(*gemini, *out, sc, format); err != nil {
				log.Fatalf("%s/%s: %v", sc.name, format, err)
			}
		}
	}
}

// capture runs one scenario in one output format and writes
// NAME.FORMAT.{stdout,stderr,exit} and, for server scenarios,
// NAME.FORMAT.requests.json.
func capture(gemini, out string, sc scenario, format string) error {
	ws, err := os.MkdirTemp("", "gemini-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	home, err := os.MkdirTemp("", "gemini-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.WriteFile(filepath.Join(ws, "three.txt"), []byte("a\nb\nc\n"), 0o644); err != nil {
		return err
	}
	args := []string{"-p", "go", "-m", "gemini-2.5-flash", "--yolo", "-o", format}
	env := append(os.Environ(), "HOME="+home, "GEMINI_API_KEY=dummy", "GEMINI_CLI_TRUST_WORKSPACE=true")
	var srv *server
	if sc.fake != "" {
		abs, err := filepath.Abs(filepath.Join(out, sc.fake))
		if err != nil {
			return err
		}
		args = append(args, "--fake-responses", abs)
	} else {
		srv = &server{replies: sc.replies, start: time.Now()}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+hs.URL)
		// A custom base URL is the gateway auth type, which gemini-cli
		// refuses unless the API key type is selected.
		if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command(gemini, args...)
	cmd.Dir, cmd.Env = ws, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return err
		}
		code = ee.ExitCode()
	}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, ws, "$WORKSPACE")
		return strings.ReplaceAll(s, home, "$HOME")
	}
	base := filepath.Join(out, sc.name+"."+format)
	files := map[string]string{
		".stdout": clean(stdout.String()),
		".stderr": clean(keepLines(stderr.String())),
		".exit":   fmt.Sprintln(code),
	}
	if srv != nil {
		b, err := json.MarshalIndent(srv.log, "", "  ")
		if err != nil {
			return err
		}
		files[".requests.json"] = clean(string(b)) + "\n"
	}
	for ext, content := range files {
		if err := os.WriteFile(base+ext, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// noise is stderr gemini-cli writes whatever the scenario: terminal and
// start-up diagnostics, and stack traces.
var noise = regexp.MustCompile(`^(Warning: 256-color|YOLO mode is enabled|Ripgrep is not available|\[STARTUP\]|\s+at )`)

func keepLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !noise.MatchString(l) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// server is a scripted Gemini API: each streamGenerateContent request
// gets the next reply; every request is logged with its contents.
type server struct {
	mu      sync.Mutex
	replies []reply
	start   time.Time
	log     []logged
}

type logged struct {
	Path string `json:"path"`
	// AfterMs is when the request came, after the previous one.
	AfterMs  int64           `json:"afterPreviousMs"`
	Contents json.RawMessage `json:"contents"`
}

var sessionContext = regexp.MustCompile(`<session_context>[\s\S]*?</session_context>`)

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Contents json.RawMessage `json:"contents"`
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	_ = json.Unmarshal(buf.Bytes(), &body)
	s.mu.Lock()
	now := time.Now()
	// The session context holds the date and temporary paths.
	contents := sessionContext.ReplaceAll(body.Contents, []byte("<session_context>…</session_context>"))
	var indented bytes.Buffer
	_ = json.Indent(&indented, contents, "", "  ")
	s.log = append(s.log, logged{Path: r.URL.Path, AfterMs: now.Sub(s.start).Milliseconds(), Contents: indented.Bytes()})
	s.start = now
	if len(s.replies) == 0 {
		s.mu.Unlock()
		http.Error(w, `{"error":{"code":500,"message":"script exhausted","status":"INTERNAL"}}`, http.StatusInternalServerError)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	if rep.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(rep.body))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range rep.chunks {
		fmt.Fprintf(w, "data: %s\r\n\r\n", c)
	}
}
