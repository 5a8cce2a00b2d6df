package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/config"
)

// TestModelResilienceSettings checks the structured model settings: they
// keep the case of model names and fields, a later layer replaces the whole
// value, and the environment can give them as JSON.
func TestModelResilienceSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	write(t, f.userSettings(), `{
		"security": {"trustedFolders": [`+quote(f.ws)+`]},
		"general": {"maxAttempts": 4},
		"model": {
			"name": "auto",
			"previewAccess": true,
			"compressionThreshold": 0.7,
			"compressionModel": "openai:Qwen3-0.6B",
			"routing": {"classifierModel": "openai:Qwen3-0.6B", "numericalThreshold": 75},
			"fallbackChains": [[
				{"model": "gemini-2.5-flash", "actions": {"terminal": "silent"}},
				{"model": "openai:Llama-3.1-8B", "lastResort": true, "maxAttempts": 3}
			]],
			"configs": {"openai:Llama-3.1-8B": {"temperature": 0.2, "excludeTools": ["run_shell_command"]}}
		}
	}`)
	write(t, f.wsSettings(), `{"model": {"configs": {"gemini-2.5-flash": {"thinkingBudget": 0}}}}`)
	s, err := config.Load(f.options(t, env{}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Model.CompressionThreshold != 0.7 || s.Model.CompressionModel != "openai:Qwen3-0.6B" {
		t.Errorf("compression threshold %v, model %q", s.Model.CompressionThreshold, s.Model.CompressionModel)
	}
	if s.General.MaxAttempts != 4 || !s.Model.PreviewAccess {
		t.Errorf("maxAttempts %d, previewAccess %v", s.General.MaxAttempts, s.Model.PreviewAccess)
	}
	wantRouting := config.RoutingSettings{ClassifierModel: "openai:Qwen3-0.6B", NumericalThreshold: 75, NumericalRouting: true, PlanRouting: true}
	if diff := cmp.Diff(wantRouting, s.Model.Routing); diff != "" {
		t.Errorf("routing (-want +got):\n%s", diff)
	}
	wantChains := [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-flash", Actions: map[string]string{"terminal": "silent"}},
		{Model: "openai:Llama-3.1-8B", LastResort: true, MaxAttempts: 3},
	}}
	if diff := cmp.Diff(wantChains, s.Model.FallbackChains); diff != "" {
		t.Errorf("chains (-want +got):\n%s", diff)
	}
	// The workspace's configs replace the user's whole map.
	zero := int32(0)
	wantConfigs := map[string]config.ModelConfigSettings{"gemini-2.5-flash": {ThinkingBudget: &zero}}
	if diff := cmp.Diff(wantConfigs, s.Model.Configs); diff != "" {
		t.Errorf("configs (-want +got):\n%s", diff)
	}

	// The environment takes JSON and wins over the files.
	s, err = config.Load(f.options(t, env{"AGENTRY_MODEL_FALLBACKCHAINS": `[[{"model":"a"},{"model":"b","lastResort":true}]]`}))
	if err != nil {
		t.Fatalf("Load with env: %v", err)
	}
	if got := s.Model.FallbackChains; len(got) != 1 || len(got[0]) != 2 || got[0][1].Model != "b" {
		t.Errorf("chains from env = %+v", got)
	}
	s, err = config.Load(f.options(t, env{"AGENTRY_MODEL_COMPRESSIONTHRESHOLD": " 1.5 "}))
	if err != nil {
		t.Fatalf("Load with a threshold from env: %v", err)
	}
	if s.Model.CompressionThreshold != 1.5 {
		t.Errorf("threshold from env = %v, want 1.5", s.Model.CompressionThreshold)
	}
}

func TestModelResilienceSettingsDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s, err := config.Load(f.options(t, env{}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.General.MaxAttempts != 10 || !s.Model.Routing.NumericalRouting || !s.Model.Routing.PlanRouting ||
		s.Model.FallbackChains != nil || s.Model.Configs != nil || s.Model.CompressionThreshold != 0.5 {
		t.Errorf("defaults: general %+v, model %+v", s.General, s.Model)
	}
}

func TestModelResilienceSettingsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, settings string
		env            env
		want           []string
	}{
		{"misspelt policy field", `{"model": {"fallbackChains": [[{"model": "a", "last_resort": true}]]}}`, nil,
			[]string{"model.fallbackChains", `unknown field "last_resort"`}},
		{"wrong type inside", `{"model": {"configs": {"a": {"temperature": "hot"}}}}`, nil,
			[]string{"model.configs", "temperature", "string"}},
		{"chains not a list", `{"model": {"fallbackChains": {"a": 1}}}`, nil,
			[]string{"model.fallbackChains", "object"}},
		{"attempts out of range", `{"general": {"maxAttempts": 11}}`, nil,
			[]string{"general.maxAttempts", "1 to 10"}},
		{"threshold out of range", `{"model": {"routing": {"numericalThreshold": 101}}}`, nil,
			[]string{"model.routing.numericalThreshold"}},
		{"compression threshold not a number", `{"model": {"compressionThreshold": "half"}}`, nil,
			[]string{"model.compressionThreshold", "a number", "string"}},
		{"compression threshold zero", `{"model": {"compressionThreshold": 0}}`, nil,
			[]string{"model.compressionThreshold", "above 0"}},
		{"compression threshold env", `{}`, env{"AGENTRY_MODEL_COMPRESSIONTHRESHOLD": "NaN"},
			[]string{"AGENTRY_MODEL_COMPRESSIONTHRESHOLD", "model.compressionThreshold", "a number"}},
		{"bad JSON in env", `{}`, env{"AGENTRY_MODEL_CONFIGS": `{"a":`},
			[]string{"AGENTRY_MODEL_CONFIGS", "model.configs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			write(t, f.userSettings(), tt.settings)
			_, err := config.Load(f.options(t, tt.env))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if !errors.Is(err, config.ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
