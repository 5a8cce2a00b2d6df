package main

import "testing"

// TestPolicyFlagsMapped: every command that defines the policy flags maps
// them to their settings, so that none is accepted and then ignored.
func TestPolicyFlagsMapped(t *testing.T) {
	for name, keys := range map[string]map[string]string{
		"run and the root command": flagKeys, "serve": serveFlagKeys, "batch": batchFlagKeys(),
	} {
		for flag, key := range policyFlagKeys() {
			if keys[flag] != key {
				t.Errorf("%s: --%s maps to %q, want %q", name, flag, keys[flag], key)
			}
		}
		if keys["allowed-tools"] != "tools.allowed" {
			t.Errorf("%s: --allowed-tools maps to %q", name, keys["allowed-tools"])
		}
	}
}
