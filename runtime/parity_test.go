package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/tools"
)

// The parity tests (parity*_test.go) run scenarios that were also run through
// gemini-cli 0.61.0; each names the fixture in ../testdata/gemini-cli
// (see its README) its expectation comes from.

// geminiCLIRequests reads the requests gemini-cli sent in a captured run.
func geminiCLIRequests(t *testing.T, run string) [][]*genai.Content {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "gemini-cli", run+".requests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []struct{ Contents []*genai.Content }
	if err := json.Unmarshal(b, &reqs); err != nil {
		t.Fatal(err)
	}
	out := make([][]*genai.Content, len(reqs))
	for i, r := range reqs {
		out[i] = r.Contents
	}
	return out
}

// shapeOf renders contents as role: part kinds and texts, the session
// context (whose text differs between the programs) as one token.
func shapeOf(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		var parts []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				s := "call " + p.FunctionCall.Name
				if len(p.ThoughtSignature) > 0 {
					s += " signed " + string(p.ThoughtSignature)
				}
				parts = append(parts, s)
			case p.FunctionResponse != nil:
				parts = append(parts, "response "+p.FunctionResponse.Name)
			case p.Thought:
				parts = append(parts, "thought "+p.Text)
			case strings.HasPrefix(p.Text, "<session_context>"):
				parts = append(parts, "<session_context>")
			default:
				parts = append(parts, p.Text)
			}
		}
		out = append(out, c.Role+": "+strings.Join(parts, " | "))
	}
	return out
}

// contextSession is a session against srv with the content processor, so
// requests carry the session context as in a real run.
func contextSession(t *testing.T, srv *fakegemini.Server, cfg Config) (*Session, *timers) {
	t.Helper()
	tm := &timers{}
	cfg.Retry.NewTimer = tm.New
	cfg.Chain = processors.NewChain(processors.NewContent(processors.ContentConfig{Roots: []string{t.TempDir()}}))
	return geminiSession(t, srv, cfg), tm
}

func sentContents(srv *fakegemini.Server) [][]*genai.Content {
	var out [][]*genai.Content
	for _, r := range srv.Requests() {
		out = append(out, r.Body.Contents)
	}
	return out
}

// TestUnknownToolParity: a call to a tool the session lacks gets
// gemini-cli's tool_not_registered error with its suggestions (as in
// tools.stream-json.stdout), never ADK's text for the agent's developer.
func TestUnknownToolParity(t *testing.T) {
	srv := fakegemini.New(t)
	srv.Enqueue(fakegemini.Call("no_such_tool", map[string]any{"x": 1}), fakegemini.Text("done"))
	names := []string{"list_directory", "read_file", "write_todos", "glob"}
	var ts []tools.Tool
	for _, n := range names {
		ts = append(ts, &fakeTool{ToolName: n, ToolKind: tools.KindRead})
	}
	s, _ := contextSession(t, srv, Config{Tools: ts})
	evs := run(t, s, "go")
	const msg = `Tool "no_such_tool" not found. Did you mean one of: "write_todos", "list_directory", "read_file"?`
	resp := find(evs, EventToolResponse)[0].ToolResponse
	if !resp.IsError || resp.Content[0].Text != msg || resp.Data["errorType"] != "tool_not_registered" || resp.Data["decision"] != nil {
		t.Errorf("tool_response = %+v", resp)
	}
	if resp.Display == nil || resp.Display.Result.Text != msg {
		t.Errorf("display = %+v, want the error", resp.Display)
	}
	var fr *genai.FunctionResponse
	for _, c := range sentContents(srv)[1] {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				fr = p.FunctionResponse
			}
		}
	}
	if fr == nil || fr.Response["error"] != msg || len(fr.Response) != 1 {
		t.Errorf("the model got %+v", fr)
	}
}
