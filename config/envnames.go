package config

import (
	"fmt"
	"sort"
	"strings"
)

// otherAgentryVars are the AGENTRY_* variables that are not settings keys:
// each is read or set by agentry itself, so finding one in the environment
// is no typo.
func otherAgentryVars() map[string]string {
	return map[string]string{
		trustEnv:              "trusts the workspace",
		"AGENTRY_A2A_TOKEN":   "the bearer token of agentry serve",
		AdminPolicyDirEnv:     "the system policy directory, in place of /etc/agentry/policies and /etc/gemini-cli/policies",
		"AGENTRY_PROJECT_DIR": "set for hooks, so a hook that runs agentry inherits it",
		"AGENTRY_SESSION_ID":  "set for hooks, like AGENTRY_PROJECT_DIR",
		// The test and benchmark harnesses run the agentry binary with
		// their own variables in its environment.
		"AGENTRY_SESSIONS_CRASH_DB":    "the session store's crash test",
		"AGENTRY_SESSIONS_CRASH_TRIAL": "the session store's crash test",
	}
}

// otherAgentryPrefixes are families of variables of the test and
// benchmark harnesses (AGENTRY_TEST_POSTGRES_DSN, AGENTRY_BENCH_DIR, …).
func otherAgentryPrefixes() []string {
	return []string{"AGENTRY_TEST_", "AGENTRY_BENCH_"}
}

// checkEnvNames fails on the first (in name order) AGENTRY_* variable of
// environ that is set, not empty, and neither a settings key's variable,
// an alias, nor one of agentry's other variables: a misspelt variable would
// otherwise be silently ignored. environ is in os.Environ's KEY=VALUE form.
func (s *schema) checkEnvNames(environ []string) error {
	known := map[string]bool{}
	for _, nv := range envAliases() {
		known[nv[0]] = true
	}
	for name := range otherAgentryVars() {
		known[name] = true
	}
	userOnly := map[string]string{}
	for _, n := range s.leaves {
		if settableOutsideUserFile(n.key) {
			known[envName(n.key)] = true
		} else {
			userOnly[envName(n.key)] = n.key
		}
	}
	var names []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "AGENTRY_") || val == "" || known[name] || hasAnyPrefix(name, otherAgentryPrefixes()) {
			continue
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	name := names[0]
	if key, ok := userOnly[name]; ok {
		return &Error{Env: name, Key: key, Msg: fmt.Sprintf(
			"%q cannot be set by a variable: trust and the server's security are decided only in ~/.agentry/settings.json", key)}
	}
	msg := "unknown variable: it names no settings key"
	if sug := suggestVar(name, known); sug != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", sug)
	}
	return &Error{Env: name, Msg: msg + "; the README's Configuration section lists the keys"}
}

// suggestVar returns the known variable closest to name, or "" when none is
// close (at most a third of the name's length away, as for keys).
func suggestVar(name string, known map[string]bool) string {
	best, bestDist := "", max(2, len(name)/3)+1
	for _, k := range sortedKeys(known) {
		if d := editDistance(name, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
