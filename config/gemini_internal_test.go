package config

import "testing"

// TestSharedGeminiKeysExist checks that every key read from gemini-cli's
// files is one of agentry's, so that renaming a setting cannot silently
// stop a gemini-cli user's value from applying.
func TestSharedGeminiKeysExist(t *testing.T) {
	t.Parallel()
	s := newSchema()
	for key := range sharedGeminiKeys() {
		if n, ok := s.byKey[key]; !ok || n.kind == kindObject {
			t.Errorf("shared key %q is not a settings value of agentry", key)
		}
	}
}
