package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// origin records where the winning value of a key came from, so that a
// problem found after merging (a missing include directory) can still name
// the file, variable or flag to fix.
type origin struct {
	file, env, flag string
	raw             string // the raw text of a variable or flag
}

// error builds an *Error for key located at o.
func (o origin) error(key, msg string) *Error {
	return &Error{File: o.file, Env: o.env, Flag: o.flag, Got: o.raw, Key: key, Msg: msg}
}

// envAliases maps the short variables to their keys. They are read before the
// full names, so AGENTRY_MODEL_NAME beats AGENTRY_MODEL when both are set.
func envAliases() [][2]string {
	return [][2]string{
		// gemini-cli's variable, read first so that every AGENTRY_*
		// variable beats it.
		{geminiModelEnv, "model.name"},
		{"AGENTRY_MODEL", "model.name"},
		{"AGENTRY_APPROVAL_MODE", "general.defaultApprovalMode"},
	}
}

// envName returns the variable of a settings key: "a.bC" is AGENTRY_A_BC.
func envName(key string) string {
	return "AGENTRY_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// settableOutsideUserFile reports whether key may come from a variable or a
// flag. security.* may not: trust is decided by the user settings file and
// AGENTRY_TRUST_WORKSPACE / --trust-workspace alone, so there is exactly one
// place to look when asking why a workspace is trusted.
func settableOutsideUserFile(key string) bool {
	return !strings.HasPrefix(key, "security.")
}

// readEnv returns the settings given by AGENTRY_* variables. Empty
// variables count as unset, as a shell's `AGENTRY_MODEL= agentry` usually
// means "not set" rather than "set to nothing".
func (s *schema) readEnv(lookup func(string) (string, bool)) (map[string]any, map[string]origin, error) {
	vars := envAliases()
	for _, n := range s.leaves {
		if settableOutsideUserFile(n.key) {
			vars = append(vars, [2]string{envName(n.key), n.key})
		}
	}
	out, origins := map[string]any{}, map[string]origin{}
	for _, nv := range vars {
		name, key := nv[0], nv[1]
		text, ok := lookup(name)
		if !ok || text == "" {
			continue
		}
		n := s.byKey[key]
		v, ok := parseText(n, text)
		exp := n.kind.expected()
		if ok {
			exp = checkValue(key, v)
		}
		if exp != "" {
			return nil, nil, &Error{Env: name, Got: text, Key: key, Expected: exp}
		}
		out[key] = v
		origins[key] = origin{env: name, raw: text}
	}
	return out, origins, nil
}

// parseText converts the text of a variable or flag to the Go type of n.
// Lists are comma-separated.
func parseText(n *node, text string) (any, bool) {
	switch n.kind {
	case kindString:
		return text, true
	case kindInt:
		i, err := strconv.Atoi(strings.TrimSpace(text))
		return i, err == nil
	case kindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	case kindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		return b, err == nil
	case kindStrings:
		return splitList(text), true
	case kindJSON:
		v, err := decodeJSON(n, []byte(text))
		return v, err == nil
	}
	return nil, false
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(text string) []string {
	out := []string{}
	for item := range strings.SplitSeq(text, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// trimList trims the items of a list flag and drops blank ones, as
// splitList does for variables, so "--allowed-tools=a, b" means a and b.
func trimList(items []string) []string {
	out := []string{}
	for _, item := range items {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// unionKeys are the list keys whose flags are returned apart: a flag of
// context.includeDirectories adds to the settings, as gemini-cli's
// --include-directories does (one more directory for a run without
// repeating the user's list); one of tools.allowed replaces them, as
// gemini-cli's --allowed-tools does, and Load records that it was given.
func unionKeys() map[string]bool {
	return map[string]bool{"tools.allowed": true, "context.includeDirectories": true}
}

// flagExtra is what a flag of a union key adds, and where it came from.
type flagExtra struct {
	values []string
	origin origin
}

// bindFlags validates the flags that were set and binds them to v, so
// that they beat every other layer. The values of the unionKeys' flags are
// returned by key instead of being bound, to be added to the merged lists.
func (s *schema) bindFlags(v *viper.Viper, flags *pflag.FlagSet, flagKeys map[string]string, origins map[string]origin) (map[string]flagExtra, error) {
	if len(flagKeys) == 0 {
		return nil, nil
	}
	if flags == nil {
		return nil, fmt.Errorf("config: FlagKeys given without a flag set")
	}
	names := sortedKeys(flagKeys)
	extra := map[string]flagExtra{}
	for _, name := range names {
		key := flagKeys[name]
		n, ok := s.byKey[key]
		if !ok || n.kind == kindObject || n.kind == kindJSON {
			return nil, fmt.Errorf("config: flag --%s is mapped to unknown settings key %q", name, key)
		}
		if !settableOutsideUserFile(key) {
			return nil, fmt.Errorf("config: flag --%s may not set %q: trust is decided by the user settings file", name, key)
		}
		f := flags.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("config: flag --%s is not defined", name)
		}
		if !f.Changed {
			continue // only what the user typed overrides
		}
		text := f.Value.String()
		var val any
		ok = true
		if sv, isSlice := f.Value.(pflag.SliceValue); isSlice && n.kind == kindStrings {
			val = trimList(sv.GetSlice())
		} else {
			val, ok = parseText(n, text)
		}
		exp := n.kind.expected()
		if ok {
			exp = checkValue(key, val)
		}
		if exp != "" {
			return nil, &Error{Flag: name, Got: text, Key: key, Expected: exp}
		}
		o := origin{flag: name, raw: text}
		if unionKeys()[key] {
			e := extra[key]
			e.values, e.origin = append(e.values, val.([]string)...), o
			extra[key] = e
			continue
		}
		origins[key] = o
		if err := v.BindPFlag(key, f); err != nil {
			return nil, fmt.Errorf("config: binding flag --%s: %w", name, err)
		}
	}
	return extra, nil
}

// union appends the items of b missing from a, keeping the order.
func union(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			seen[x] = true
			a = append(a, x)
		}
	}
	return a
}
