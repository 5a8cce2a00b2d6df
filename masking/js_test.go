package masking

import (
	"testing"

	"google.golang.org/genai"
)

func TestJSExports(t *testing.T) {
	if got := TrimJS("\ufeff \t x \u0085"); got != "x \u0085" {
		t.Errorf("TrimJS = %q", got)
	}
	// Lengths computed with Node's JSON.stringify(content).length.
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{genai.NewPartFromFunctionCall("foo",
		map[string]any{"n": 1.5, "big": 1e21, "small": 1e-7, "arr": []any{true, nil, "x"}})}}
	if got := JSONLength(call); got != 122 {
		t.Errorf("JSONLength(function call) = %d, want 122", got)
	}
	if got := PrettyJSON(map[string]any{"b": 1.0, "a": "<x>"}); got != "{\n  \"a\": \"<x>\",\n  \"b\": 1\n}" {
		t.Errorf("PrettyJSON = %q", got)
	}
}
