package compression

import (
	"os"
	"testing"
)

func TestTokenLimit(t *testing.T) {
	for model, want := range map[string]int{
		"gemini-2.5-pro":              1_048_576,
		"gemini:gemini-3-pro-preview": 1_048_576,
		"gemma-4-31b-it":              256_000,
		"models/gemma-4-26b-a4b-it":   256_000,
		"openai:gpt-5":                DefaultTokenLimit,
	} {
		if got := TokenLimit(model); got != want {
			t.Errorf("TokenLimit(%q) = %d, want %d", model, got, want)
		}
	}
}

// TestDefaultUtilityModel follows gemini-cli's modelStringToModelConfigAlias
// tests through to the aliases' models.
func TestDefaultUtilityModel(t *testing.T) {
	for model, want := range map[string]string{
		"gemini-flash-flash":      "gemini-3-pro-preview",
		"gemini-3-pro-preview":    "gemini-3-pro-preview",
		"gemini-3.1-pro-preview":  "gemini-3-pro-preview",
		"gemini-3-flash-preview":  "gemini-3-flash-preview",
		"gemini-3.1-flash-lite":   "gemini-3.1-flash-lite",
		"gemini-2.5-pro":          "gemini-2.5-pro",
		"gemini:gemini-2.5-flash": "gemini-2.5-flash",
		"gemini-2.5-flash-lite":   "gemini-2.5-flash-lite",
	} {
		if got := DefaultUtilityModel(model); got != want {
			t.Errorf("DefaultUtilityModel(%q) = %q, want %q", model, got, want)
		}
	}
}

// TestPrompt compares the prompt with gemini-cli's own output
// (testdata/*.golden, written by running its getCompressionPrompt).
func TestPrompt(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	plain, plan := read("prompt.golden"), read("prompt_plan.golden")
	tests := []struct {
		model, plan, want string
	}{
		{"gemini-3-pro-preview", "", plain},
		{"gemini-3-pro-preview", "/tmp/plans/plan.md", plan},
		{"gemini-3.1-flash-lite", "/tmp/plans/plan.md", plan},
		{"openai:gpt-5", "/tmp/plans/plan.md", plan},
		// Gemini 2.x get the legacy prompt, which has no plan section.
		{"gemini-2.5-pro", "/tmp/plans/plan.md", plain},
		{"gemini-30", "/tmp/plans/plan.md", plain},
	}
	for _, tt := range tests {
		if got := Prompt(tt.model, tt.plan); got != tt.want {
			t.Errorf("Prompt(%q, %q) differs from gemini-cli's", tt.model, tt.plan)
		}
	}
}
