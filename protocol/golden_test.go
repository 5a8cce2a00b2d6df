package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol/devtool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// rpcStream POSTs a JSON-RPC request with the development-tool extension
// and returns the SSE events' JSON.
func (h *harness) rpcStream(body string) []map[string]any {
	h.t.Helper()
	return h.rpcStreamWith(body, true)
}

// rpcStreamWith is rpcStream with the extension or (ext false) without.
func (h *harness) rpcStreamWith(body string, ext bool) []map[string]any {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.t.Context(), http.MethodPost, h.url+"/", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if ext {
		req.Header.Set("X-A2A-Extensions", devtool.URI)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("status %d", resp.StatusCode)
	}
	if got, want := resp.Header.Get("X-A2A-Extensions"), map[bool]string{true: devtool.URI}[ext]; got != want {
		h.t.Errorf("X-A2A-Extensions echoed %q, want %q", got, want)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &m); err != nil {
			h.t.Fatalf("SSE data %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// normalizer replaces generated ids and times with stable names, and
// the workspace directory, when set, with <workspace>.
type normalizer struct {
	names map[string]string
	n     map[string]int
	ws    string
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func (z *normalizer) walk(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		// In key order: ids are named in the order they are met.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			x[k] = z.walk(x[k], k)
		}
	case []any:
		for i, e := range x {
			x[i] = z.walk(e, key)
		}
	case string:
		switch {
		case key == "timestamp":
			return "<time>"
		case (key == "file_path" || key == "working_directory" || key == "workspace_path") && filepath.IsAbs(x):
			return "<workspace>/" + filepath.Base(x)
		case strings.HasPrefix(x, "replay:"):
			return "replay:<model.jsonl>"
		case uuidRE.MatchString(x) || key == "tool_call_id":
			if z.names[x] == "" {
				z.n[""]++
				z.names[x] = fmt.Sprintf("<id-%d>", z.n[""])
			}
			return z.names[x]
		case z.ws != "":
			return strings.ReplaceAll(x, z.ws, "<workspace>")
		}
	}
	return v
}

// TestAppendixGoldenTranscript holds the extension's example flow
// (seed appendix A) event by event on the wire, over the A2A 0.3 JSON-RPC
// binding gemini-cli's clients speak: the task, working, the write_file
// call PENDING with its confirmation request, input-required (final);
// then, after the client's proceed_once, EXECUTING, SUCCEEDED, the
// answer's text and completed (final).
func TestAppendixGoldenTranscript(t *testing.T) {
	h := newHarness(t, []string{
		callTurn("", "write_file", map[string]any{"file_path": "hello.py", "content": "print('hello')\n"}),
		textTurn("I wrote hello.py."),
	})
	first := h.rpcStream(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Write a hello world script"}],"metadata":{%q:{"workspace_path":%q}}}}}`,
		devtool.URI, h.settings.Workspace))
	if len(first) < 2 {
		t.Fatalf("first stream: %v", first)
	}
	last := first[len(first)-1]["result"].(map[string]any)
	taskID, contextID := last["taskId"].(string), last["contextId"].(string)
	var callID string
	for _, ev := range first {
		r := ev["result"].(map[string]any)
		if st, ok := r["status"].(map[string]any); ok {
			if msg, ok := st["message"].(map[string]any); ok {
				for _, p := range msg["parts"].([]any) {
					if d, ok := p.(map[string]any)["data"].(map[string]any); ok && d["tool_call_id"] != nil {
						callID = d["tool_call_id"].(string)
					}
				}
			}
		}
	}
	second := h.rpcStream(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m2","role":"user","taskId":%q,"contextId":%q,"parts":[{"kind":"data","data":{"tool_call_id":%q,"selected_option_id":"proceed_once"}}]}}}`,
		taskID, contextID, callID))
	z := &normalizer{names: map[string]string{}, n: map[string]int{}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(z.walk([]any{toAny(first), toAny(second)}, "")); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	golden := filepath.Join("testdata", "appendix.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("transcript differs from %s (go test -run Golden -update rewrites it):\n%s", golden, got)
	}
}

func toAny(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// TestPlainGoldenTranscript holds a plain client's view of a task on the
// wire, in A2A 0.3 (what gemini-cli's remote agents speak) and 1.0: the
// task, working, the answer's first chunk, input-required with the
// question; after the reply "yes", working, the call running, the rest
// of the answer, its last chunk and completed. No development-tool
// metadata anywhere.
func TestPlainGoldenTranscript(t *testing.T) {
	streams := map[string]any{}
	for _, v := range []struct {
		name, first, second string
	}{
		{"a2a-0.3",
			`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Write a hello world script"}]}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m2","role":"user","taskId":%q,"contextId":%q,"parts":[{"kind":"text","text":"yes"}]}}}`},
		{"a2a-1.0",
			`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Write a hello world script"}]}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","taskId":%q,"contextId":%q,"parts":[{"text":"yes"}]}}}`},
	} {
		h := newHarness(t, []string{
			callTurn("I'll write it.", "write_file", map[string]any{"file_path": "hello.py", "content": "print('hello')\n"}),
			textTurn("I wrote hello.py."),
		})
		first := h.rpcStreamWith(v.first, false)
		if len(first) < 2 {
			t.Fatalf("%s first stream: %v", v.name, first)
		}
		last := first[len(first)-1]["result"].(map[string]any)
		if st, ok := last["statusUpdate"].(map[string]any); ok {
			last = st
		}
		second := h.rpcStreamWith(fmt.Sprintf(v.second, last["taskId"], last["contextId"]), false)
		z := &normalizer{names: map[string]string{}, n: map[string]int{}, ws: h.settings.Workspace}
		streams[v.name] = z.walk([]any{toAny(first), toAny(second)}, "")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(streams); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	if bytes.Contains(got, []byte(devtool.URI)) {
		t.Errorf("a plain stream names the development-tool extension:\n%s", got)
	}
	golden := filepath.Join("testdata", "plain.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Errorf("transcript differs from %s (go test -run Golden -update rewrites it):\n%s", golden, got)
	}
}
