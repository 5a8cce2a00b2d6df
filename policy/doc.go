// Package policy is gemini-cli's policy engine: rules that decide, for
// every tool call, whether it runs (allow), asks the user (ask_user) or is
// refused (deny).
//
// Rules come from TOML files ([[rule]] tables, see Parse and LoadPaths),
// from settings (SettingsRules), from the bundled defaults (Defaults) and
// from the user's "always" answers (AlwaysRules, persisted by a Saver).
// Each rule's effective priority is its tier plus its priority divided by
// 1000; New sorts rules highest first and Check returns the decision of the
// first rule that matches a Call. A shell command (run_shell_command) is
// split into its commands, and each is checked on its own.
//
// The package is a leaf: it imports no other agentry package.
package policy
