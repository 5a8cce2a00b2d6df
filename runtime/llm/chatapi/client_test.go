package chatapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// server is a Chat Completions server on loopback: it records each request
// and answers with respond.
type server struct {
	t       *testing.T
	srv     *httptest.Server
	respond http.HandlerFunc

	mu   sync.Mutex
	seen []seen
}

type seen struct {
	method, path string
	header       http.Header
	body         []byte
}

func newServer(t *testing.T, respond http.HandlerFunc) *server {
	t.Helper()
	s := &server{t: t, respond: respond}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		s.mu.Lock()
		s.seen = append(s.seen, seen{r.Method, r.URL.Path, r.Header.Clone(), body})
		s.mu.Unlock()
		s.respond(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) client(cfg Config) *Client {
	s.t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = s.srv.URL + "/v1"
	}
	cfg.HTTPClient = s.srv.Client()
	c, err := New(cfg)
	if err != nil {
		s.t.Fatalf("New: %v", err)
	}
	return c
}

func (s *server) only() seen {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) != 1 {
		s.t.Fatalf("server saw %d requests, want 1", len(s.seen))
	}
	return s.seen[0]
}

// rawBody answers with body verbatim as an event stream.
func rawBody(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

func ptr[T any](v T) *T { return &v }

// TestRequestGolden checks the exact request body sent for each field, in
// golden files under testdata (rewrite them with -update).
func TestRequestGolden(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		req    Request
	}{{
		name:   "every_field",
		stream: true,
		req: Request{
			Model: "qwen3",
			Messages: []Message{
				{Role: RoleSystem, Content: TextContent("You are agentry.\nUse <tags> & quotes \"as is\".")},
				{Role: RoleUser, Content: TextContent("List the files.")},
				{Role: RoleAssistant, Content: TextContent("Sure."), ToolCalls: []ToolCall{
					{ID: "call_a", Type: "function", Function: FunctionCall{Name: "list_directory", Arguments: `{"path":"."}`}},
				}},
				{Role: RoleAssistant, ToolCalls: []ToolCall{
					{ID: "call_b", Type: "function", Function: FunctionCall{Name: "now", Arguments: `{}`}},
				}},
				{Role: RoleTool, ToolCallID: "call_a", Content: TextContent(`{"output":"main.go"}`)},
				{Role: RoleTool, ToolCallID: "call_b", Content: TextContent(`{}`)},
				{Role: RoleUser, Content: &Content{Parts: []ContentPart{
					{Text: "What is in this picture?"},
					{ImageURL: "data:image/png;base64,iVBORw=="},
					{ImageURL: "https://example.com/cat.jpg"},
					{Text: ""},
				}}},
			},
			StreamOptions: &StreamOptions{IncludeUsage: true},
			Tools: []Tool{
				{Type: "function", Function: Function{Name: "list_directory", Description: "Lists a directory.", Parameters: map[string]any{
					"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"},
				}}},
				{Type: "function", Function: Function{Name: "now", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}},
			},
			ToolChoice:       &ToolChoice{Function: "now"},
			Temperature:      ptr(0.2),
			TopP:             ptr(0.95),
			PresencePenalty:  ptr(0.5),
			FrequencyPenalty: ptr(-0.5),
			MaxTokens:        ptr[int64](1024),
			Stop:             []string{"END", "STOP"},
			Seed:             ptr[int64](42),
			ResponseFormat: &ResponseFormat{Type: "json_schema", JSONSchema: &JSONSchema{Name: "response", Schema: map[string]any{
				"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
			}}},
		},
	}, {
		name: "unary_max_completion_tokens_json_object",
		req: Request{
			Model:               "gpt-5",
			Messages:            []Message{{Role: RoleUser, Content: TextContent("q")}},
			Tools:               []Tool{{Type: "function", Function: Function{Name: "a", Parameters: map[string]any{"type": "object"}}}},
			ToolChoice:          &ToolChoice{Mode: "required"},
			Temperature:         ptr(0.0),
			MaxCompletionTokens: ptr[int64](50),
			Seed:                ptr[int64](0),
			ResponseFormat:      &ResponseFormat{Type: "json_object"},
		},
	}, {
		name: "tool_choice_none",
		req: Request{
			Model:      "m",
			Messages:   []Message{{Role: RoleUser, Content: TextContent("q")}},
			Tools:      []Tool{{Type: "function", Function: Function{Name: "a", Parameters: map[string]any{}}}},
			ToolChoice: &ToolChoice{Mode: "none"},
		},
	}, {
		name:   "minimal_stream",
		stream: true,
		req:    Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: TextContent("hi")}}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.stream {
					rawBody("data: [DONE]\n\n")(w, r)
					return
				}
				io.WriteString(w, `{"choices":[]}`)
			})
			c := s.client(Config{})
			var err error
			if tt.stream {
				for _, err = range c.Stream(t.Context(), &tt.req) {
				}
			} else {
				_, err = c.Create(t.Context(), &tt.req)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := json.Indent(&got, s.only().body, "", "  "); err != nil {
				t.Fatalf("request body is not JSON: %v\n%s", err, s.only().body)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", tt.name+".json")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("request body differs from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestRequestLeavesCallerRequest checks Stream and Create set "stream" on a
// copy.
func TestRequestLeavesCallerRequest(t *testing.T) {
	s := newServer(t, rawBody("data: [DONE]\n\n"))
	req := &Request{Model: "m"}
	for range s.client(Config{}).Stream(t.Context(), req) {
	}
	if req.Stream {
		t.Error("Stream set Stream on the caller's request")
	}
}

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		stream bool
		want   map[string]string
	}{
		{"keyless stream", Config{}, true, map[string]string{
			"Authorization": "", "Content-Type": "application/json", "Accept": "text/event-stream",
		}},
		{"key and user agent", Config{APIKey: "sk-test", UserAgent: "agentry/1.2.3"}, false, map[string]string{
			"Authorization": "Bearer sk-test", "Content-Type": "application/json", "Accept": "application/json", "User-Agent": "agentry/1.2.3",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.stream {
					rawBody("data: [DONE]\n\n")(w, r)
					return
				}
				io.WriteString(w, `{}`)
			})
			c := s.client(tt.cfg)
			req := &Request{Model: "m"}
			var err error
			if tt.stream {
				for _, err = range c.Stream(t.Context(), req) {
				}
			} else {
				_, err = c.Create(t.Context(), req)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := s.only()
			if got.method != http.MethodPost || got.path != "/v1/chat/completions" {
				t.Errorf("request %s %s, want POST /v1/chat/completions", got.method, got.path)
			}
			for k, want := range tt.want {
				if v := got.header.Get(k); v != want {
					t.Errorf("%s = %q, want %q", k, v, want)
				}
			}
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	tests := []struct{ base, want string }{
		{"https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"},
		{"http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/chat/completions"},
		{"http://gw.example/openai/v1", "http://gw.example/openai/v1/chat/completions"},
		// The path resolves like a relative reference: a query on the base
		// is not carried over.
		{"http://gw.example/v1?key=x", "http://gw.example/v1/chat/completions"},
	}
	for _, tt := range tests {
		c, err := New(Config{BaseURL: tt.base})
		if err != nil {
			t.Errorf("New(%q): %v", tt.base, err)
			continue
		}
		if got := c.Endpoint(); got != tt.want {
			t.Errorf("New(%q).Endpoint() = %q, want %q", tt.base, got, tt.want)
		}
	}
	for _, bad := range []string{"", "localhost:11434/v1", "ftp://host/v1", "http://%zz", "/v1"} {
		if _, err := New(Config{BaseURL: bad}); err == nil {
			t.Errorf("New(%q) succeeded, want an error", bad)
		}
	}
}

// TestStreamEvents covers the event-stream format: each case's body is sent
// verbatim and the contents of the chunks read are compared.
func TestStreamEvents(t *testing.T) {
	chunk := func(content string) string {
		return fmt.Sprintf(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":%q}}]}`, content)
	}
	tests := []struct {
		name    string
		body    string
		want    []string
		wantErr string
	}{{
		name: "plain",
		body: "data: " + chunk("a") + "\n\ndata: " + chunk("b") + "\n\ndata: [DONE]\n\n",
		want: []string{"a", "b"},
	}, {
		name: "comments and blank lines",
		body: ": keep-alive\n\n\n\ndata: " + chunk("a") + "\n: between fields\n\n:\n\ndata: " + chunk("b") + "\n\n\ndata: [DONE]\n\n",
		want: []string{"a", "b"},
	}, {
		name: "other fields are ignored",
		body: "event: message\nid: 7\nretry: 1000\ndata: " + chunk("a") + "\n\nevent: ping\n\ndata: [DONE]\n\n",
		want: []string{"a"},
	}, {
		name: "multi-line data",
		body: "data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"split\"}}]}\n\ndata: [DONE]\n\n",
		want: []string{"split"},
	}, {
		name: "no space after the colon, CRLF line ends",
		body: "data:" + chunk("a") + "\r\n\r\ndata:[DONE]\r\n\r\n",
		want: []string{"a"},
	}, {
		name: "events after DONE are ignored",
		body: "data: " + chunk("a") + "\n\ndata: [DONE]\n\ndata: " + chunk("late") + "\n\ndata: not json\n\n",
		want: []string{"a"},
	}, {
		name: "body ends without DONE",
		body: "data: " + chunk("a") + "\n\ndata: " + chunk("b") + "\n\n",
		want: []string{"a", "b"},
	}, {
		name: "an event cut off by the end of the body is dropped",
		body: "data: " + chunk("a") + "\n\ndata: " + chunk("b"),
		want: []string{"a"},
	}, {
		name:    "error event mid-stream",
		body:    "data: " + chunk("a") + "\n\ndata: {\"error\":{\"message\":\"engine overloaded\",\"type\":\"server_error\"}}\n\ndata: " + chunk("b") + "\n\n",
		want:    []string{"a"},
		wantErr: `received error while streaming: {"message":"engine overloaded","type":"server_error"}`,
	}, {
		name:    "error event as a string",
		body:    "data: {\"error\":\"out of memory\"}\n\n",
		wantErr: "received error while streaming: out of memory",
	}, {
		name: "a null error is no error",
		body: "data: {\"error\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n",
		want: []string{"a"},
	}, {
		name:    "an event that is not JSON",
		body:    "data: " + chunk("a") + "\n\ndata: {oops\n\n",
		want:    []string{"a"},
		wantErr: "reading a stream event: invalid character",
	}, {
		name: "a JSON body instead of a stream has no events",
		body: `{"choices":[{"index":0,"message":{"content":"x"}}]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, rawBody(tt.body))
			var (
				got []string
				err error
			)
			for ch, e := range s.client(Config{}).Stream(t.Context(), &Request{Model: "m"}) {
				if e != nil {
					err = e
					break
				}
				for _, c := range ch.Choices {
					got = append(got, string(c.Delta.Content))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestStreamEndsAtDone checks the stream ends at [DONE] even when the server
// keeps the body open after it.
func TestStreamEndsAtDone(t *testing.T) {
	release := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	// Cleanups run last-in first-out: release the handler before the server
	// is closed.
	t.Cleanup(func() { close(release) })
	done := make(chan int, 1)
	go func() {
		n := 0
		for _, err := range s.client(Config{}).Stream(t.Context(), &Request{Model: "m"}) {
			if err != nil {
				t.Errorf("stream: %v", err)
			}
			n++
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n != 1 {
			t.Errorf("got %d chunks, want 1", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end at [DONE]")
	}
}

// TestStreamErrorEventType checks an error event is a *StreamError holding
// the event's error member.
func TestStreamErrorEventType(t *testing.T) {
	s := newServer(t, rawBody("data: {\"error\":{\"message\":\"boom\",\"code\":503}}\n\n"))
	var err error
	for _, err = range s.client(Config{}).Stream(t.Context(), &Request{Model: "m"}) {
	}
	var se *StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *StreamError", err, err)
	}
	if string(se.Data) != `{"message":"boom","code":503}` {
		t.Errorf("Data = %s", se.Data)
	}
}

// TestStreamLongLine checks a tool call's arguments far longer than
// bufio's default 64 KiB line arrive whole.
func TestStreamLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	s := newServer(t, rawBody(`data: {"choices":[{"index":0,"delta":{"content":"`+long+`"}}]}`+"\n\n"))
	var got string
	for ch, err := range s.client(Config{}).Stream(t.Context(), &Request{Model: "m"}) {
		if err != nil {
			t.Fatal(err)
		}
		got += string(ch.Choices[0].Delta.Content)
	}
	if got != long {
		t.Errorf("got %d bytes of content, want %d", len(got), len(long))
	}
}

func TestHTTPError(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		body     string
		want     Error
		wantText string
	}{{
		name:   "OpenAI shape",
		status: 429,
		header: map[string]string{"Retry-After": "7", "Retry-After-Ms": "6500"},
		body:   `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		want:   Error{StatusCode: 429, Code: "rate_limit_exceeded", Type: "requests", Message: "Rate limit reached"},
		wantText: `POST "%s/v1/chat/completions": 429 Too Many Requests ` +
			`{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}`,
	}, {
		name:     "numeric code",
		status:   400,
		body:     `{"error":{"message":"bad","code":400,"param":"messages"}}`,
		want:     Error{StatusCode: 400, Code: "400", Param: "messages", Message: "bad"},
		wantText: `POST "%s/v1/chat/completions": 400 Bad Request {"message":"bad","code":400,"param":"messages"}`,
	}, {
		name:     "Ollama string error",
		status:   404,
		body:     `{"error":"model 'x' not found"}`,
		want:     Error{StatusCode: 404, Message: "model 'x' not found"},
		wantText: `POST "%s/v1/chat/completions": 404 Not Found "model 'x' not found"`,
	}, {
		name:     "vLLM shape",
		status:   404,
		body:     `{"object":"error","message":"model m does not exist","type":"NotFoundError","code":404}`,
		want:     Error{StatusCode: 404},
		wantText: `POST "%s/v1/chat/completions": 404 Not Found {"object":"error","message":"model m does not exist","type":"NotFoundError","code":404}`,
	}, {
		name:     "plain text",
		status:   502,
		body:     "upstream connect error\n",
		want:     Error{StatusCode: 502},
		wantText: `POST "%s/v1/chat/completions": 502 Bad Gateway upstream connect error`,
	}, {
		name:     "empty body",
		status:   503,
		want:     Error{StatusCode: 503},
		wantText: `POST "%s/v1/chat/completions": 503 Service Unavailable`,
	}}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
					for k, v := range tt.header {
						w.Header().Set(k, v)
					}
					w.WriteHeader(tt.status)
					io.WriteString(w, tt.body)
				})
				c := s.client(Config{})
				var err error
				if stream {
					n := 0
					for _, err = range c.Stream(t.Context(), &Request{Model: "m"}) {
						n++
					}
					if n != 1 {
						t.Errorf("stream yielded %d times, want once (the error)", n)
					}
				} else {
					_, err = c.Create(t.Context(), &Request{Model: "m"})
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want *Error", err, err)
				}
				got := Error{StatusCode: e.StatusCode, Code: e.Code, Type: e.Type, Param: e.Param, Message: e.Message}
				if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Error{})); diff != "" {
					t.Errorf("error fields (-want +got):\n%s", diff)
				}
				if string(e.Body) != tt.body {
					t.Errorf("Body = %q, want %q", e.Body, tt.body)
				}
				for k, v := range tt.header {
					if got := e.Header.Get(k); got != v {
						t.Errorf("Header %s = %q, want %q", k, got, v)
					}
				}
				if want := fmt.Sprintf(tt.wantText, s.srv.URL); err.Error() != want {
					t.Errorf("Error() = %q\nwant      %q", err.Error(), want)
				}
				s.only() // no retries
			})
		}
	}
}

func TestErrorBodyClipped(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, strings.Repeat("é", 2<<20))
	})
	_, err := s.client(Config{}).Create(t.Context(), &Request{Model: "m"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if len(e.Body) != maxErrorBody {
		t.Errorf("Body holds %d bytes, want the first %d", len(e.Body), maxErrorBody)
	}
	detail := strings.TrimPrefix(err.Error(), fmt.Sprintf("POST %q: 500 Internal Server Error ", s.srv.URL+"/v1/chat/completions"))
	if !strings.HasSuffix(detail, "…") || len(detail) > 500+len("…") || !json.Valid([]byte(`"`+detail+`"`)) {
		t.Errorf("error detail is %d bytes, want at most 500 whole runes and an ellipsis", len(detail))
	}
}

func TestCreate(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{
		  "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "served",
		  "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null, "message": {
		    "role": "assistant", "content": null, "refusal": "no",
		    "reasoning": "thinking",
		    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a.go"}}}],
		    "function_call": {"name": "legacy", "arguments": "{}"}}}],
		  "usage": {"prompt_tokens": 20, "completion_tokens": "9", "total_tokens": 29.0,
		    "prompt_tokens_details": {"cached_tokens": 16}, "completion_tokens_details": null}
		}`)
	})
	got, err := s.client(Config{}).Create(t.Context(), &Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var want Completion
	want.ID, want.Model = "chatcmpl-9", "served"
	want.Choices = []Choice{{FinishReason: "tool_calls", Message: ResponseMessage{
		Refusal:      "no",
		Reasoning:    json.RawMessage(`"thinking"`),
		ToolCalls:    []ToolCallDelta{{ID: "call_1", Type: "function", Function: FunctionCallDelta{Name: "read_file", Arguments: `{"path": "a.go"}`}}},
		FunctionCall: &FunctionCallDelta{Name: "legacy", Arguments: "{}"},
	}}}
	want.Usage = &Usage{PromptTokens: 20, CompletionTokens: 9, TotalTokens: 29}
	want.Usage.PromptTokensDetails.CachedTokens = 16
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
	if r := got.Choices[0].Message.ReasoningText(); r != "thinking" {
		t.Errorf("ReasoningText = %q, want thinking", r)
	}
}

func TestReasoningText(t *testing.T) {
	tests := []struct {
		content, reasoning string
		want               string
	}{
		{`"a"`, `"b"`, "a"},
		{``, `"b"`, "b"},
		{`null`, `"b"`, "b"},
		{`""`, `"b"`, "b"},
		{``, `{"effort":"low"}`, ""},
		{`null`, `null`, ""},
	}
	for _, tt := range tests {
		m := ResponseMessage{ReasoningContent: json.RawMessage(tt.content), Reasoning: json.RawMessage(tt.reasoning)}
		if got := m.ReasoningText(); got != tt.want {
			t.Errorf("ReasoningText(%s, %s) = %q, want %q", tt.content, tt.reasoning, got, tt.want)
		}
	}
}

func TestLenientValues(t *testing.T) {
	strs := []struct{ in, want string }{
		{`"a\nb"`, "a\nb"},
		{`null`, ""},
		{`12`, "12"},
		{`true`, "true"},
		{`{"k": [1, 2]}`, `{"k": [1, 2]}`},
	}
	for _, tt := range strs {
		var s String
		if err := json.Unmarshal([]byte(tt.in), &s); err != nil || string(s) != tt.want {
			t.Errorf("String from %s = %q, %v; want %q", tt.in, s, err, tt.want)
		}
	}
	ints := []struct {
		in   string
		want Int
	}{
		{`7`, 7}, {`-3`, -3}, {`"12"`, 12}, {`4.0`, 4}, {`1e3`, 1000}, {`null`, 0}, {`"x"`, 0}, {`{}`, 0}, {`1e300`, 0},
	}
	for _, tt := range ints {
		n := Int(99)
		if err := json.Unmarshal([]byte(tt.in), &n); err != nil || n != tt.want {
			t.Errorf("Int from %s = %d, %v; want %d", tt.in, n, err, tt.want)
		}
	}
}
