package policy

// Outcome is the user's "always" answer to a confirmation.
type Outcome string

// The outcomes that add rules.
const (
	ProceedAlways        Outcome = "proceed_always"
	ProceedAlwaysAndSave Outcome = "proceed_always_and_save"
	ProceedAlwaysTool    Outcome = "proceed_always_tool"
	ProceedAlwaysServer  Outcome = "proceed_always_server"
)

// AlwaysRules returns the rules an "always" answer to a call adds, and
// whether the session switches to autoEdit (proceed_always on a file edit).
func AlwaysRules(c Call, o Outcome) (rules []Rule, switchToAutoEdit bool, err error) {
	return nil, false, nil
}
