package modelid

import "testing"

// TestResolveEveryAliasAndAccess pins what every alias resolves to for
// every combination of access, written out from gemini-cli's resolveModel
// (packages/core/src/config/models.ts at 5411f113, with its experimental
// dynamic model configuration and the Gemini 3.5 Flash rollout off):
// "auto" and "pro" are the stable Pro model without preview access and the
// preview Pro otherwise; "auto-gemini-3" is the preview Pro, downgraded to
// the stable Pro without preview access; "auto-gemini-2.5" is always the
// stable Pro; "flash" is the preview Flash, downgraded to the stable Flash;
// "flash-lite" and the legacy "none" are Gemini 3.1 Flash Lite.
func TestResolveEveryAliasAndAccess(t *testing.T) {
	// The columns: every Access, in this order.
	accesses := [8]Access{
		{},
		{CustomTools: true},
		{Gemini31: true},
		{Gemini31: true, CustomTools: true},
		{Preview: true},
		{Preview: true, CustomTools: true},
		{Preview: true, Gemini31: true},
		{Preview: true, Gemini31: true, CustomTools: true},
	}
	const (
		p25   = "gemini-2.5-pro"
		f25   = "gemini-2.5-flash"
		p3    = "gemini-3-pro-preview"
		p31   = "gemini-3.1-pro-preview"
		p31ct = "gemini-3.1-pro-preview-customtools"
		f3    = "gemini-3-flash-preview"
		fl31  = "gemini-3.1-flash-lite"
	)
	golden := map[string][8]string{
		//                 none  CT   31   31CT  P    P+CT P+31 P+31+CT
		"auto":            {p25, p25, p25, p25, p3, p3, p31, p31ct},
		"pro":             {p25, p25, p25, p25, p3, p3, p31, p31ct},
		"auto-gemini-3":   {p25, p25, p25, p25, p3, p3, p31, p31ct},
		"auto-gemini-2.5": {p25, p25, p25, p25, p25, p25, p25, p25},
		"flash":           {f25, f25, f25, f25, f3, f3, f3, f3},
		"flash-lite":      {fl31, fl31, fl31, fl31, fl31, fl31, fl31, fl31},
		"none":            {fl31, fl31, fl31, fl31, fl31, fl31, fl31, fl31},
	}
	for name, want := range golden {
		for i, acc := range accesses {
			for _, spelled := range []string{name, "gemini:" + name, "models/" + name} {
				if got := Resolve(spelled, acc); got != want[i] {
					t.Errorf("Resolve(%q, %+v) = %q, want %q", spelled, acc, got, want[i])
				}
			}
		}
	}
	// Every alias has a row.
	for _, a := range []string{AliasAuto, AliasPro, AliasAutoGemini3, AliasAutoGemini25, AliasFlash, AliasFlashLite} {
		if _, ok := golden[a]; !ok {
			t.Errorf("alias %q has no golden row", a)
		}
		if !IsAlias(a) {
			t.Errorf("IsAlias(%q) = false", a)
		}
	}
}

func TestIsAlias(t *testing.T) {
	for name, want := range map[string]bool{
		"auto": true, "gemini:flash": true, " pro ": true, "flash-lite": true,
		"auto-gemini-3": true, "auto-gemini-2.5": true,
		"none": false, "gemini-2.5-pro": false, "openai:flash": false, "": false,
	} {
		if got := IsAlias(name); got != want {
			t.Errorf("IsAlias(%q) = %v, want %v", name, got, want)
		}
	}
}
