package masking

import (
	"strings"
	"testing"

	"google.golang.org/genai"
)

// The cases of gemini-cli's tokenCalculation.test.ts, with the exact
// figures its heuristic gives (its tests often only bound them).
func TestEstimateTokens(t *testing.T) {
	image := &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("data")}}
	tests := []struct {
		name  string
		parts []*genai.Part
		want  int
	}{
		{"simple ASCII", []*genai.Part{{Text: "Hello world!"}}, 3},      // 12 × 0.25
		{"CJK", []*genai.Part{{Text: "你好"}}, 3},                         // 2 × 1.5
		{"mixed", []*genai.Part{{Text: "Hi你好"}}, 3},                     // 0.5 + 3
		{"astral counts two code units", []*genai.Part{{Text: "😀"}}, 3}, // 2 × 1.5
		{"empty text", []*genai.Part{{Text: ""}}, 0},                    //
		{"empty part", []*genai.Part{{}}, 0},                            //
		{"no parts", nil, 0},                                            //
		{"text and image", []*genai.Part{{Text: "Hello"}, image}, 3001}, // 1.25 + 3000
		{"image", []*genai.Part{image}, 3000},                           //
		{"file image", []*genai.Part{{FileData: &genai.FileData{MIMEType: "image/jpeg", FileURI: "gs://x"}}}, 3000},
		{"pdf", []*genai.Part{{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: []byte("large_pdf_data")}}}, 25800},
		{"massive text is length/4", []*genai.Part{{Text: strings.Repeat("a", 200_000)}}, 50_000},
		{"massive non-ASCII text is length/4 too", []*genai.Part{{Text: strings.Repeat("é", 120_000)}}, 30_000},
		{"100,000 characters use the full heuristic", []*genai.Part{{Text: strings.Repeat("é", 100_000)}}, 150_000},
		{
			// {"bar":"baz"} args: JSON.stringify of the part is 52 code units.
			"function call by JSON length",
			[]*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "foo", Args: map[string]any{"bar": "baz"}}}},
			13,
		},
		{
			// name 7/4 + {"output":"result…"} 6013/4 = 1505
			"function response",
			[]*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "my_tool", ID: "123", Response: map[string]any{"output": strings.Repeat("result", 1000)}}}},
			1505,
		},
		{
			// name 15/4 + {"status":"success"} 20/4 + a nested image 3000
			"function response with nested media",
			[]*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name: "multimodal_tool", ID: "456", Response: map[string]any{"status": "success"},
				Parts: []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: []byte("b")}}},
			}}},
			3008,
		},
		{
			// JavaScript's JSON.stringify leaves <, > and & alone
			// (encoding/json would write \u003c): {"output":"<a&b>"} is 18.
			"response JSON is JavaScript's",
			[]*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "t", Response: map[string]any{"output": "<a&b>\u2028"}}}},
			(1 + 19) / 4,
		},
		{"nil response", []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "abcdefgh"}}}, 2},
		{"parts sum before flooring", []*genai.Part{{Text: "ab"}, {Text: "cd"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.parts); got != tt.want {
				t.Errorf("EstimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestJSONLikeJavaScript(t *testing.T) {
	// Expected values are what Node 20's JSON.stringify writes.
	value := map[string]any{"a": 1, "b": []any{1, 2, map[string]any{"c": nil}}, "d": map[string]any{}, "e": []any{}, "f": "x", "g": true, "h": []any{[]any{}}, "i": map[string]any{"j": map[string]any{"k": "v"}}}
	compact := `{"a":1,"b":[1,2,{"c":null}],"d":{},"e":[],"f":"x","g":true,"h":[[]],"i":{"j":{"k":"v"}}}`
	pretty := "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2,\n    {\n      \"c\": null\n    }\n  ],\n  \"d\": {},\n  \"e\": [],\n  \"f\": \"x\",\n  \"g\": true,\n  \"h\": [\n    []\n  ],\n  \"i\": {\n    \"j\": {\n      \"k\": \"v\"\n    }\n  }\n}"
	if got := string(appendJSON(nil, value, false)); got != compact {
		t.Errorf("compact:\n got %s\nwant %s", got, compact)
	}
	if got := string(appendJSON(nil, value, true)); got != pretty {
		t.Errorf("pretty:\n got %s\nwant %s", got, pretty)
	}
	if got := jsonLen(value); got != len(compact) {
		t.Errorf("jsonLen = %d, want %d", got, len(compact))
	}

	strs := []struct{ in, want string }{
		{"quote\" back\\ slash", `"quote\" back\\ slash"`},
		{"ctl\x00\x01\x1f\b\f\n\r\t end", `"ctl\u0000\u0001\u001f\b\f\n\r\t end"`},
		{"<tag>&amp;", `"<tag>&amp;"`},
		{"ls\u2028ps\u2029", "\"ls\u2028ps\u2029\""},
		{"emoji😀 é 你好\x7f", "\"emoji😀 é 你好\x7f\""},
		{"bad\xffutf8", "\"bad\uFFFDutf8\""},
	}
	for _, s := range strs {
		if got := string(appendJSON(nil, s.in, false)); got != s.want {
			t.Errorf("string %q: got %s, want %s", s.in, got, s.want)
		}
		if got, want := jsonLen(s.in), utf16Len(s.want); got != want {
			t.Errorf("jsonLen(%q) = %d, want %d", s.in, got, want)
		}
	}

	nums := []struct {
		in   any
		want string
	}{
		{0.0, "0"}, {1.0, "1"}, {-1.0, "-1"}, {0.1, "0.1"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"},
		{1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {1.5e300, "1.5e+300"}, {-2.5e-10, "-2.5e-10"},
		{3.14159, "3.14159"}, {7, "7"}, {int64(-42), "-42"}, {uint8(9), "9"},
	}
	for _, n := range nums {
		if got := string(appendJSON(nil, n.in, false)); got != n.want {
			t.Errorf("number %v: got %s, want %s", n.in, got, n.want)
		}
	}

	// Typed values encode as their JSON; array-index keys come first, as
	// JavaScript enumerates them.
	type rec struct {
		Name string `json:"name"`
		N    int    `json:"n,omitempty"`
	}
	typed := map[string]any{"list": []string{"a", "b"}, "rec": rec{Name: "<x>"}, "10": 1, "2": 2, "m": map[string]int{"z": 1}, "nilp": (*rec)(nil)}
	want := `{"2":2,"10":1,"list":["a","b"],"m":{"z":1},"nilp":null,"rec":{"name":"<x>"}}`
	if got := string(appendJSON(nil, typed, false)); got != want {
		t.Errorf("typed:\n got %s\nwant %s", got, want)
	}
	if got := jsonLen(typed); got != len(want) {
		t.Errorf("jsonLen(typed) = %d, want %d", got, len(want))
	}
}

func TestHasMaskedTag(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want bool
	}{
		{map[string]any{"output": "<tool_output_masked>\nx"}, true},
		{map[string]any{"a": []any{1, "deep <tool_output_masked"}}, true},
		{map[string]any{"<tool_output_masked": 1}, true},
		{map[string]any{"output": "tool_output_masked"}, false},
		{map[string]any{"output": "<tool_output_maske"}, false},
		{map[string]any{"n": 1.5, "b": true, "z": nil}, false},
		{map[string]any{"typed": []string{"<tool_output_masked>"}}, true},
	} {
		if got := hasMaskedTag(tt.v); got != tt.want {
			t.Errorf("hasMaskedTag(%v) = %v", tt.v, got)
		}
	}
}
