package policy

// Defaults returns the bundled default policies at TierDefault, with
// agentry's tool names.
func Defaults() []Rule { return nil }

// LoadPaths loads policy files at a tier. Each path is a directory (its
// *.toml files, not recursive) or a file; missing paths are not errors. A
// file with a TOML or schema error is skipped whole; a rule with a bad
// regular expression is dropped alone. Errors carry gemini-cli's texts.
func LoadPaths(paths []string, tier Tier) ([]Rule, []error) { return nil, nil }

// Parse parses one policy file's content at a tier; source names the file
// in errors and in each rule's Source.
func Parse(data []byte, tier Tier, source string) ([]Rule, []error) { return nil, nil }
