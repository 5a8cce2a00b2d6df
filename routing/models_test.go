package routing

import "testing"

func TestNormalizeModelID(t *testing.T) {
	for in, want := range map[string]string{
		"gemini-2.5-pro":               "gemini-2.5-pro",
		"models/gemini-2.5-pro":        "gemini-2.5-pro",
		"gemini:gemini-2.5-pro":        "gemini-2.5-pro",
		"gemini:models/gemini-2.5-pro": "gemini-2.5-pro",
		"  gemini-2.5-pro\t":           "gemini-2.5-pro",
		"gemini:auto":                  "auto",
		"openai:gpt-4o":                "openai:gpt-4o",
		"replay:models/x.jsonl":        "replay:models/x.jsonl",
		"tunedModels/x":                "tunedModels/x",
		"":                             "",
	} {
		if got := NormalizeModelID(in); got != want {
			t.Errorf("NormalizeModelID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	var (
		none    = Access{}
		preview = Access{Preview: true}
		g31     = Access{Preview: true, Gemini31: true}
		g31ct   = Access{Preview: true, Gemini31: true, CustomTools: true}
		g31only = Access{Gemini31: true} // launched, but no preview access
	)
	tests := []struct {
		in   string
		acc  Access
		want string
	}{
		{AliasAuto, none, DefaultProModel},
		{AliasAuto, preview, PreviewProModel},
		{AliasAuto, g31, Preview31ProModel},
		{AliasAuto, g31ct, Preview31CustomToolsModel},
		{AliasAuto, g31only, DefaultProModel},
		{AliasPro, none, DefaultProModel},
		{AliasPro, preview, PreviewProModel},
		{AliasPro, g31, Preview31ProModel},
		{AliasAutoGemini3, none, DefaultProModel},
		{AliasAutoGemini3, preview, PreviewProModel},
		{AliasAutoGemini3, g31, Preview31ProModel},
		{AliasAutoGemini3, g31ct, Preview31CustomToolsModel},
		{AliasAutoGemini25, none, DefaultProModel},
		{AliasAutoGemini25, g31, DefaultProModel},
		{AliasFlash, none, DefaultFlashModel},
		{AliasFlash, preview, PreviewFlashModel},
		{AliasFlashLite, none, FlashLite31Model},
		{AliasFlashLite, preview, FlashLite31Model},
		// Explicit preview ids: upgraded to 3.1, downgraded without access.
		{PreviewProModel, preview, PreviewProModel},
		{PreviewProModel, g31, Preview31ProModel},
		{PreviewProModel, none, DefaultProModel},
		{Preview31ProModel, preview, Preview31ProModel},
		{Preview31ProModel, none, DefaultProModel},
		{Preview31CustomToolsModel, none, DefaultProModel},
		{PreviewFlashModel, preview, PreviewFlashModel},
		{PreviewFlashModel, none, DefaultFlashModel},
		// Stable and unknown ids are untouched.
		{DefaultProModel, none, DefaultProModel},
		{DefaultFlashModel, preview, DefaultFlashModel},
		{Flash25LiteModel, none, Flash25LiteModel},
		{FlashLite31Model, none, FlashLite31Model},
		{"gemma-3-27b-it", none, "gemma-3-27b-it"},
		{"my-custom-model", preview, "my-custom-model"},
		// gemini-cli's deprecated flash-lite placeholder.
		{"none", none, FlashLite31Model},
		// Normalization applies before the alias lookup.
		{"models/" + DefaultFlashModel, none, DefaultFlashModel},
		{"gemini:flash", preview, PreviewFlashModel},
		{" pro ", none, DefaultProModel},
		// Other schemes are opaque.
		{"openai:gpt-4o", none, "openai:gpt-4o"},
		{"openai:auto", preview, "openai:auto"},
		{"replay:x.jsonl", none, "replay:x.jsonl"},
		{"", none, ""},
	}
	for _, tc := range tests {
		if got := ResolveModel(tc.in, tc.acc); got != tc.want {
			t.Errorf("ResolveModel(%q, %+v) = %q, want %q", tc.in, tc.acc, got, tc.want)
		}
	}
}

func TestModelPredicates(t *testing.T) {
	tests := []struct {
		in                    string
		auto, gemini3, fllite bool
	}{
		{in: AliasAuto, auto: true, gemini3: true},
		{in: AliasAutoGemini3, auto: true, gemini3: true},
		{in: AliasAutoGemini25, auto: true},
		{in: "gemini:auto", auto: true, gemini3: true},
		{in: "models/auto-gemini-2.5", auto: true},
		{in: AliasPro, gemini3: true},
		{in: AliasFlash, gemini3: true},
		{in: AliasFlashLite, gemini3: true, fllite: true},
		{in: PreviewProModel, gemini3: true},
		{in: Preview31ProModel, gemini3: true},
		{in: Preview31CustomToolsModel, gemini3: true},
		{in: PreviewFlashModel, gemini3: true},
		{in: FlashLite31Model, gemini3: true, fllite: true},
		{in: "models/" + FlashLite31Model, gemini3: true, fllite: true},
		{in: "none", gemini3: true, fllite: true},
		{in: "gemini-3", gemini3: true},
		{in: "gemini-30-pro"},
		{in: DefaultProModel},
		{in: DefaultFlashModel},
		{in: Flash25LiteModel},
		{in: "openai:gemini-3-pro-preview"},
		{in: "openai:auto"},
		{in: "replay:auto"},
		{in: ""},
	}
	for _, tc := range tests {
		if got := IsAutoAlias(tc.in); got != tc.auto {
			t.Errorf("IsAutoAlias(%q) = %v, want %v", tc.in, got, tc.auto)
		}
		if got := IsGemini3(tc.in); got != tc.gemini3 {
			t.Errorf("IsGemini3(%q) = %v, want %v", tc.in, got, tc.gemini3)
		}
		if got := IsFlashLite(tc.in); got != tc.fllite {
			t.Errorf("IsFlashLite(%q) = %v, want %v", tc.in, got, tc.fllite)
		}
	}
}

func TestResolveClassifierChoice(t *testing.T) {
	var (
		none    = Access{}
		preview = Access{Preview: true}
		g31     = Access{Preview: true, Gemini31: true}
	)
	tests := []struct {
		requested, choice string
		acc               Access
		want              string
	}{
		{AliasAuto, "flash", preview, PreviewFlashModel},
		{AliasAuto, "flash", none, DefaultFlashModel},
		{AliasAuto, "pro", preview, PreviewProModel},
		{AliasAuto, "pro", g31, Preview31ProModel},
		{AliasAuto, "pro", none, DefaultProModel},
		{AliasAutoGemini3, "flash", preview, PreviewFlashModel},
		{AliasAutoGemini3, "flash", none, DefaultFlashModel},
		{AliasAutoGemini3, "pro", g31, Preview31ProModel},
		{AliasAutoGemini3, "pro", none, DefaultProModel},
		{PreviewProModel, "flash", preview, PreviewFlashModel},
		{PreviewProModel, "pro", preview, PreviewProModel},
		{AliasAutoGemini25, "flash", preview, DefaultFlashModel},
		{AliasAutoGemini25, "pro", preview, DefaultProModel},
		{DefaultProModel, "flash", preview, DefaultFlashModel},
		{DefaultProModel, "pro", preview, DefaultProModel},
		{"models/" + AliasAutoGemini25, "flash", preview, DefaultFlashModel},
		// gemini-cli sends any other requested model's flash pick to the
		// preview Flash, and its pro pick to the requested model itself.
		{DefaultFlashModel, "flash", preview, PreviewFlashModel},
		{DefaultFlashModel, "pro", preview, DefaultFlashModel},
		{Preview31ProModel, "flash", none, DefaultFlashModel},
	}
	for _, tc := range tests {
		if got := ResolveClassifierChoice(tc.requested, tc.choice, tc.acc); got != tc.want {
			t.Errorf("ResolveClassifierChoice(%q, %q, %+v) = %q, want %q", tc.requested, tc.choice, tc.acc, got, tc.want)
		}
	}
}
