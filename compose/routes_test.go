package compose

import (
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
)

// TestRoutingSettingsErrors: a bad chain or model config is a setup error
// (exit 52) that names the setting and the problem.
func TestRoutingSettingsErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*config.Settings)
		want   string
	}{
		{"no last resort", func(s *config.Settings) {
			s.Model.FallbackChains = [][]config.ModelPolicySettings{{{Model: "gemini-2.5-pro"}, {Model: "gemini-2.5-flash"}}}
		}, "lastResort"},
		{"unknown action", func(s *config.Settings) {
			s.Model.FallbackChains = [][]config.ModelPolicySettings{{{Model: "gemini-2.5-pro", LastResort: true, Actions: map[string]string{"terminal": "loud"}}}}
		}, "loud"},
		{"unknown model", func(s *config.Settings) {
			s.Model.FallbackChains = [][]config.ModelPolicySettings{{{Model: "gpt-4o", LastResort: true}}}
		}, "model.fallbackChains[0][0]"},
		{"bad thinking level", func(s *config.Settings) {
			s.Model.Configs = map[string]config.ModelConfigSettings{"gemini-2.5-pro": {ThinkingLevel: "max"}}
		}, "model.configs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := config.Defaults()
			s.Model.Name = "gemini-2.5-pro"
			tt.mutate(&s)
			_, err := NewRouting(&s, nil, nil, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			if _, _, code := runtime.ErrorStatus(err); code != runtime.ExitConfig || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q (exit %d) does not say %q", err, code, tt.want)
			}
		})
	}
}
