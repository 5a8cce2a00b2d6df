package a2acli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// scriptConn is a conn that answers each send or subscribe with the next
// of its recorded streams, and records the requests.
type scriptConn struct {
	streams  [][]a2a.Event
	sent     []*a2a.SendMessageRequest
	canceled []a2a.TaskID
}

func (s *scriptConn) next() iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if len(s.streams) == 0 {
			yield(nil, io.ErrUnexpectedEOF)
			return
		}
		evs := s.streams[0]
		s.streams = s.streams[1:]
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (s *scriptConn) send(_ context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	s.sent = append(s.sent, req)
	return s.next()
}

func (s *scriptConn) subscribe(context.Context, a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return s.next()
}

func (s *scriptConn) resume(context.Context, a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return s.next()
}

// never is a watch clock that never ticks: the scripted answers come
// first.
func never(time.Duration) <-chan time.Time { return nil }

func (s *scriptConn) get(context.Context, a2a.TaskID) (*a2a.Task, error) {
	return nil, a2a.ErrTaskNotFound
}

func (s *scriptConn) cancel(_ context.Context, id a2a.TaskID) error {
	s.canceled = append(s.canceled, id)
	return nil
}

func (s *scriptConn) where() string { return "JSONRPC 1.0 at http://127.0.0.1:41242/" }
func (s *scriptConn) close() error  { return nil }

// recorded reads testdata/<name>.events.jsonl — the -o json lines of a
// real run against agentry serve, ids, times and paths made stable — as
// the streams of its requests: each ends where the task waits for input.
func recorded(t *testing.T, name string) [][]a2a.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var streams [][]a2a.Event
	var cur []a2a.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var sr a2a.StreamResponse
		if err := json.Unmarshal(sc.Bytes(), &sr); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		cur = append(cur, sr.Event)
		if final(sr.Event) {
			streams, cur = append(streams, cur), nil
		}
	}
	if len(cur) > 0 {
		streams = append(streams, cur)
	}
	return streams
}

// golden compares got with testdata/<name>.golden, or rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./a2acli -run Golden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./a2acli -run Golden -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestGolden runs recorded tasks through the command's loop — the
// rendering in both formats, the questions and the answers sent back —
// and holds stdout, stderr, the exit code and the answers to golden
// files.
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name, events string
		cfg          Config
		answers      string // "" with noReader: nothing can answer
		noReader     bool
		wantCode     int
		wantAnswer   string // the JSON of the answer's parts, "" when none is sent
	}{
		{name: "ext-text", events: "ext", answers: "maybe\ny\n", wantCode: 0,
			wantAnswer: `[{"data":{"selected_option_id":"proceed_once","tool_call_id":"adk-id-6"}}]`},
		{name: "ext-dim", events: "ext", cfg: Config{Dim: true}, answers: "a\n", wantCode: 0,
			wantAnswer: `[{"data":{"selected_option_id":"proceed_always","tool_call_id":"adk-id-6"}}]`},
		{name: "ext-json", events: "ext", cfg: Config{Output: OutputJSON}, answers: "y\n", wantCode: 0,
			wantAnswer: `[{"data":{"selected_option_id":"proceed_once","tool_call_id":"adk-id-6"}}]`},
		{name: "ext-approve-no", events: "ext-declined", cfg: Config{Approve: ApproveNo}, noReader: true, wantCode: 0,
			wantAnswer: `[{"data":{"selected_option_id":"cancel","tool_call_id":"adk-id-6"}}]`},
		{name: "ext-no-reader", events: "ext-declined", noReader: true, wantCode: 0,
			wantAnswer: `[{"data":{"selected_option_id":"cancel","tool_call_id":"adk-id-6"}}]`},
		{name: "plain-text", events: "plain", cfg: Config{Plain: true}, answers: "yes\n", wantCode: 0,
			wantAnswer: `[{"text":"yes"}]`},
		{name: "plain-json", events: "plain", cfg: Config{Plain: true, Output: OutputJSON}, answers: "yes\n", wantCode: 0,
			wantAnswer: `[{"text":"yes"}]`},
		{name: "plain-unanswered", events: "plain", cfg: Config{Plain: true}, answers: "", wantCode: ExitWaiting},
		{name: "fail-text", events: "fail", wantCode: ExitFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			cfg := c.cfg
			cfg.URL, cfg.Prompt, cfg.Out, cfg.Err = "http://127.0.0.1:41242", "run the thing", &out, &errb
			if !c.noReader {
				cfg.Answers = func() (io.Reader, error) { return strings.NewReader(c.answers), nil }
			}
			if err := cfg.check(); err != nil {
				t.Fatal(err)
			}
			cfg.after = never
			conn := &scriptConn{streams: recorded(t, c.events)}
			var o output = &jsonOutput{out: cfg.Out, err: cfg.Err}
			if cfg.Output == OutputText {
				o = newTextOutput(cfg.Out, cfg.Err, cfg.Dim)
			}
			r := &run{cfg: &cfg, conn: conn, out: o, ask: newAsker(&cfg), t: newTracker()}
			oc, err := r.run(t.Context())
			if err == nil {
				o.end(oc, r.t.reason, cfg.URL)
			}
			if code := ExitCode(oc, err); code != c.wantCode {
				t.Errorf("exit code %d (%v), want %d", code, err, c.wantCode)
			}
			golden(t, c.name, "== stdout\n"+out.String()+"== stderr\n"+errb.String())

			if c.wantAnswer == "" {
				if len(conn.sent) != 1 {
					t.Errorf("%d requests sent, want the prompt alone", len(conn.sent))
				}
				return
			}
			if len(conn.sent) != 2 {
				t.Fatalf("%d requests sent, want the prompt and the answer", len(conn.sent))
			}
			first, answer := conn.sent[0].Message, conn.sent[1].Message
			if first.TaskID != "" || first.ContextID != "" || partsText(first.Parts) != "run the thing" {
				t.Errorf("the prompt: %+v", first)
			}
			if answer.TaskID != "task-1" || answer.ContextID != "context-1" || answer.Role != a2a.MessageRoleUser {
				t.Errorf("the answer names task %q, context %q, role %q; want task-1, context-1, user", answer.TaskID, answer.ContextID, answer.Role)
			}
			if b, _ := json.Marshal(answer.Parts); string(b) != c.wantAnswer {
				t.Errorf("the answer's parts %s, want %s", b, c.wantAnswer)
			}
		})
	}
}

// TestJSONLines: every line -o json writes is an A2A 1.0 StreamResponse
// that decodes to the event received, and nothing else is written.
func TestJSONLines(t *testing.T) {
	var want []a2a.Event
	for _, s := range recorded(t, "ext") {
		want = append(want, s...)
	}
	var out, errb bytes.Buffer
	j := &jsonOutput{out: &out, err: &errb}
	for _, ev := range want {
		j.event(ev)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) || errb.Len() != 0 {
		t.Fatalf("%d lines for %d events, stderr %q", len(lines), len(want), errb.String())
	}
	for i, l := range lines {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &keys); err != nil || len(keys) != 1 {
			t.Fatalf("line %d is not a one-member object: %v\n%s", i+1, err, l)
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal([]byte(l), &sr); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		a, _ := json.Marshal(a2a.StreamResponse{Event: want[i]})
		b, _ := json.Marshal(sr)
		if !bytes.Equal(a, b) {
			t.Errorf("line %d decodes to another event:\n%s\n%s", i+1, a, b)
		}
	}
}
