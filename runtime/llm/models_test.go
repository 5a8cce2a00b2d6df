package llm

import (
	"errors"
	"testing"

	"github.com/agentry-dev/agentry/modelid"
)

func TestParseModel(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
		err  bool
	}{
		{in: "gemini-2.5-flash", want: Ref{SchemeGemini, "gemini-2.5-flash"}},
		{in: "models/gemini-2.5-pro", want: Ref{SchemeGemini, "gemini-2.5-pro"}},
		{in: "flash", want: Ref{SchemeGemini, "gemini-2.5-flash"}},
		{in: "auto", want: Ref{SchemeGemini, "gemini-2.5-pro"}},
		{in: "gemma-3-27b-it", want: Ref{SchemeGemini, "gemma-3-27b-it"}},
		{in: "gemini:my-tuned", want: Ref{SchemeGemini, "my-tuned"}},
		{in: "gemini:pro", want: Ref{SchemeGemini, "gemini-2.5-pro"}},
		{in: "openai:qwen3:8b", want: Ref{SchemeOpenAI, "qwen3:8b"}},
		{in: "replay:a/b.jsonl", want: Ref{SchemeReplay, "a/b.jsonl"}},
		{in: "replay-nonstrict:x.jsonl", want: Ref{SchemeReplayNonStric, "x.jsonl"}},
		{in: "gpt-4o", err: true},
		{in: "", err: true},
		{in: "openai:", err: true},
		{in: "ollama:llama3", err: true},
	}
	for _, tc := range tests {
		got, err := ParseModel(tc.in)
		if tc.err {
			if !errors.Is(err, ErrUnknownModel) {
				t.Errorf("ParseModel(%q) err = %v, want ErrUnknownModel", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseModel(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestRefString(t *testing.T) {
	for in, want := range map[string]string{"flash": "gemini-2.5-flash", "openai:m": "openai:m", "replay:f.jsonl": "replay:f.jsonl"} {
		r, err := ParseModel(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseModel(%q).String() = %q, %v; want %q", in, r.String(), err, want)
		}
	}
}

// TestParseModelUsesTheOneAliasTable guards against a second alias table:
// a parsed alias names the model modelid resolves it to for an account
// without preview access, for every alias, so "auto-gemini-3" is
// gemini-2.5-pro here as in routing.
func TestParseModelUsesTheOneAliasTable(t *testing.T) {
	for _, a := range []string{modelid.AliasAuto, modelid.AliasPro, modelid.AliasAutoGemini3, modelid.AliasAutoGemini25, modelid.AliasFlash, modelid.AliasFlashLite} {
		want := modelid.Resolve(a, modelid.Access{})
		for _, name := range []string{a, "gemini:" + a} {
			ref, err := ParseModel(name)
			if err != nil || ref != (Ref{SchemeGemini, want}) {
				t.Errorf("ParseModel(%q) = %+v, %v; want %q", name, ref, err, want)
			}
		}
	}
	if ref, _ := ParseModel("auto-gemini-3"); ref.Model != "gemini-2.5-pro" {
		t.Errorf("ParseModel(auto-gemini-3) = %q, want gemini-2.5-pro", ref.Model)
	}
}
