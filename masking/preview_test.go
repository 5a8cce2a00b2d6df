package masking

import (
	"encoding/json"
	"os"
	"testing"

	"google.golang.org/genai"
)

func TestShellPreview(t *testing.T) {
	long := ""
	for i := range 25 {
		long += "l" + string(rune('a'+i)) + "\n"
	}
	tests := []struct {
		name string
		resp map[string]any
		want string
	}{
		{
			"sections kept, output shortened",
			map[string]any{"output": "Output: " + long + "Exit Code: 2\nProcess Group PGID: 7"},
			"Output: la\nlb\nlc\nld\nle\nlf\nlg\nlh\nli\nlj\n\n... [5 lines omitted] ...\n\nlp\nlq\nlr\nls\nlt\nlu\nlv\nlw\nlx\nly\nExit Code: 2\nProcess Group PGID: 7",
		},
		{
			"agentry's untrusted_context wrapper is a leading section",
			map[string]any{"output": "<untrusted_context>\nOutput: hi\nProcess Group PGID: 7\n</untrusted_context>"},
			"<untrusted_context>\nOutput: hi\nProcess Group PGID: 7\n</untrusted_context>",
		},
		{
			"top-level exit code and error are added",
			map[string]any{"output": "Output: x", "exitCode": 3.0, "error": "spawn failed"},
			"Output: x\n[Exit Code: 3]\n[Error: spawn failed]",
		},
		{
			"exit code already shown is not repeated",
			map[string]any{"output": "Output: x\nExit Code: 3", "exit_code": 3},
			"Output: x\nExit Code: 3",
		},
		{"no sections: plain text, nothing added", map[string]any{"output": "plain", "exitCode": 1}, "plain"},
		{"stdout when output is empty", map[string]any{"output": "", "stdout": "Output: s"}, "Output: s"},
		{"object output is compact JSON", map[string]any{"output": map[string]any{"a": []any{1.0}}}, `{"a":[1]}`},
		{"number output", map[string]any{"output": 1.5}, "1.5"},
		{"nothing", map[string]any{}, ""},
	}
	for _, tt := range tests {
		if got := shellPreview(tt.resp); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestGenericPreview(t *testing.T) {
	short := `{"output": "x"}`
	if got := genericPreview([]byte(short)); got != short {
		t.Errorf("short: %q", got)
	}
	long := ""
	for i := range 600 {
		long += string(rune('a' + i%26))
	}
	want := long[:250] + "\n... [TRUNCATED] ...\n" + long[350:]
	if got := genericPreview([]byte(long)); got != want {
		t.Errorf("long: %q", got)
	}
}

// TestJavaScriptCases replays testdata/js_cases.json: random inputs whose
// expected outputs were computed by gemini-cli's formatShellPreview,
// formatTruncatedToolOutput, JSON.stringify and estimateTokenCountSync
// under Node 20 (objects with keys in sorted order, as Go maps give them).
func TestJavaScriptCases(t *testing.T) {
	data, err := os.ReadFile("testdata/js_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Kind            string
		Response        map[string]any
		Text            string
		Max             int
		Value           map[string]any
		Want            string
		Compact, Pretty string
		Tokens          int
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		switch c.Kind {
		case "shell":
			if got := shellPreview(c.Response); got != c.Want {
				t.Errorf("case %d shell preview:\n got %q\nwant %q", i, got, c.Want)
			}
		case "truncate":
			if got := FormatTruncated(c.Text, "/tmp/x.txt", c.Max); got != c.Want {
				t.Errorf("case %d truncation:\n got %q\nwant %q", i, got, c.Want)
			}
		case "json":
			if got := string(appendJSON(nil, c.Value, false)); got != c.Compact {
				t.Errorf("case %d JSON:\n got %s\nwant %s", i, got, c.Compact)
			}
			if got := string(appendJSON(nil, c.Value, true)); got != c.Pretty {
				t.Errorf("case %d indented JSON:\n got %s\nwant %s", i, got, c.Pretty)
			}
			p := &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "tool", Response: c.Value}}
			if got := EstimateTokens([]*genai.Part{p}); got != c.Tokens {
				t.Errorf("case %d tokens = %d, want %d", i, got, c.Tokens)
			}
		default:
			t.Fatalf("case %d: kind %q", i, c.Kind)
		}
	}
}
