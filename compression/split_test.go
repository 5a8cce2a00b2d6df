package compression

import (
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
)

func text(role genai.Role, s string) *genai.Content { return genai.NewContentFromText(s, role) }

// TestSplitPoint runs gemini-cli's findCompressSplitPoint cases.
func TestSplitPoint(t *testing.T) {
	five := []*genai.Content{
		text(genai.RoleUser, "This is the first message."),
		text(genai.RoleModel, "This is the second message."),
		text(genai.RoleUser, "This is the third message."),
		text(genai.RoleModel, "This is the fourth message."),
		text(genai.RoleUser, "This is the fifth message."),
	}
	tests := []struct {
		name     string
		contents []*genai.Content
		fraction float64
		want     int
	}{
		{"empty history", nil, 0.5, 0},
		{"fraction in the middle", five, 0.5, 4},
		{"fraction of last index", five, 0.9, 4},
		{"fraction after last index", five[:4], 0.8, 4},
		{"earlier split point when the history ends on a call", []*genai.Content{
			text(genai.RoleUser, "This is the first message."),
			text(genai.RoleModel, "This is the second message."),
			text(genai.RoleUser, "This is the third message."),
			{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("foo", map[string]any{})}},
		}, 0.99, 2},
		{"one item", []*genai.Content{text(genai.RoleUser, "Message 1")}, 0.5, 0},
		{"weird parts", []*genai.Content{
			text(genai.RoleUser, "Message 1"),
			{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromURI("derp", "text/plain")}},
			text(genai.RoleUser, "Message 2"),
		}, 0.5, 2},
		{"a function response never starts the kept part", []*genai.Content{
			text(genai.RoleUser, strings.Repeat("a", 100)),
			{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("f", nil)}},
			{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromFunctionResponse("f", map[string]any{"output": "x"})}},
			{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("f", nil)}},
		}, 0.1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitPoint(tt.contents, tt.fraction)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("SplitPoint = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestSplitPointRejectsFractions(t *testing.T) {
	for _, f := range []float64{0, 1, -0.5, 2} {
		if _, err := SplitPoint(nil, f); err == nil || !strings.Contains(err.Error(), "fraction must be between 0 and 1") {
			t.Errorf("SplitPoint(nil, %v) error = %v", f, err)
		}
	}
}

// TestJSLength checks content sizes against JSON.stringify(...).length as
// Node computes it for {role, parts: [{text}]}.
func TestJSLength(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"plain", 42},
		{"é", 38},
		{"日本語", 40},
		{"😀x", 40},
		{"\u2028\u2029", 39},
		{"\b\f\x01\x1f\t\n\r", 59},
		{`"quote" \ back`, 54},
		{"<a&b>", 42},
		{"\u007f\u0080", 39},
		{"\ufeff", 38},
	}
	for _, tt := range tests {
		if got := masking.JSONLength(text(genai.RoleUser, tt.text)); got != tt.want {
			t.Errorf("JSONLength(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("foo",
		map[string]any{"n": 1.5, "big": 1e21, "small": 1e-7, "arr": []any{true, nil, "x"}})}}
	if got := masking.JSONLength(call); got != 122 {
		t.Errorf("JSONLength(function call) = %d, want 122", got)
	}
}
