package policy

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// FileError is one problem found loading a policy file, with gemini-cli's
// fields; Error() is gemini-cli's text:
//
//	[TIER] Policy file error in <file>:
//	  <message>
//	<details>
//	  Suggestion: <suggestion>
type FileError struct {
	// Path is the file (or the path that could not be read).
	Path string
	// Tier is the tier the file was loaded at.
	Tier Tier
	// RuleIndex is the rule's index in the file, -1 when the error is the file's.
	RuleIndex int
	// Kind is gemini-cli's errorType: file_read, toml_parse,
	// schema_validation, rule_validation, regex_compilation, tool_name_warning.
	Kind string
	// Message, Details and Suggestion are gemini-cli's texts.
	Message, Details, Suggestion string
	// Warning is true for a warning (the rule is kept).
	Warning bool
}

// Error returns gemini-cli's formatted text.
func (e *FileError) Error() string {
	sev := "error"
	if e.Warning {
		sev = "warning"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] Policy file %s in %s:\n  %s", strings.ToUpper(e.Tier.String()), sev, filepath.Base(e.Path), e.Message)
	if e.Details != "" {
		b.WriteString("\n" + e.Details)
	}
	if e.Suggestion != "" {
		b.WriteString("\n  Suggestion: " + e.Suggestion)
	}
	return b.String()
}

// Unwrap returns ErrUnsupportedRegex for a pattern RE2 cannot express.
func (e *FileError) Unwrap() error {
	if e.Kind == "regex_compilation" && strings.Contains(e.Details, ErrUnsupportedRegex.Error()) {
		return ErrUnsupportedRegex
	}
	return nil
}

// LoadPaths loads policy files at a tier. Each path is a directory (its
// *.toml regular files, not recursive) or a .toml file; missing paths are not
// errors. A file with a TOML or schema error is skipped whole; a rule with a
// bad regular expression is dropped alone. The errors are *FileError values
// with gemini-cli's texts (warnings among them: FileError.Warning).
func LoadPaths(paths []string, tier Tier) ([]Rule, []error) {
	var rules []Rule
	var errs []error
	for _, p := range paths {
		files, err := policyFiles(p)
		if err != nil {
			errs = append(errs, &FileError{Path: p, Tier: tier, RuleIndex: -1, Kind: "file_read",
				Message: "Failed to read policy path", Details: err.Error()})
			continue
		}
		for _, f := range files {
			data, err := readPolicyFile(f.path, f.fromDir)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, &FileError{Path: f.path, Tier: tier, RuleIndex: -1, Kind: "file_read",
						Message: "Failed to read policy file", Details: err.Error()})
				}
				continue
			}
			r, e := Parse(data, tier, f.path)
			rules = append(rules, r...)
			errs = append(errs, e...)
		}
	}
	return rules, errs
}

// MaxFileSize is the largest policy file read; a larger one is an error
// of that file (a policy is a few kilobytes).
const MaxFileSize = 1 << 20

// errNotRegular reports a policy file that became something else than a
// regular file between listing and opening.
var errNotRegular = errors.New("not a regular file")

// readPolicyFile reads one policy file: a regular file only, never waiting
// on a FIFO, at most MaxFileSize bytes; one found in a directory listing
// is not followed if it became a symbolic link since.
func readPolicyFile(path string, fromDir bool) ([]byte, error) {
	flags := os.O_RDONLY | openNonBlock
	if fromDir {
		flags |= openNoFollow
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%d bytes, more than the %d a policy file may have", st.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("more than the %d bytes a policy file may have", MaxFileSize)
	}
	return data, nil
}

// policyFile is one file LoadPaths reads.
type policyFile struct {
	path    string
	fromDir bool // found in a directory listing
}

func policyFiles(p string) ([]policyFile, error) {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if st.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var out []policyFile
		for _, e := range ents {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".toml") {
				out = append(out, policyFile{path: filepath.Join(p, e.Name()), fromDir: true})
			}
		}
		return out, nil
	}
	if st.Mode().IsRegular() && strings.HasSuffix(p, ".toml") {
		return []policyFile{{path: p}}, nil
	}
	return nil, nil
}

// ruleKeys are the [[rule]] keys gemini-cli reads, in its schema's order.
var ruleKeys = []string{"toolName", "subagent", "mcpName", "argsPattern", "commandPrefix", "commandRegex",
	"decision", "priority", "modes", "interactive", "toolAnnotations", "allowRedirection", "allow_redirection",
	"denyMessage", "deny_message"}

// Parse parses one policy file's content at a tier; source names the file
// (its base name is used in errors and in each rule's Source, "<Tier>: <file>").
func Parse(data []byte, tier Tier, source string) ([]Rule, []error) {
	return parse(data, tier, source, true)
}

// parse is Parse; checkPatterns false skips checking each argsPattern (New
// checks them again when it builds the rules).
func parse(data []byte, tier Tier, source string, checkPatterns bool) ([]Rule, []error) {
	fe := func(kind, msg, details, suggestion string, idx int) *FileError {
		return &FileError{Path: source, Tier: tier, RuleIndex: idx, Kind: kind, Message: msg, Details: details, Suggestion: suggestion}
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		details := err.Error()
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			details = fmt.Sprintf("%s at row %d, col %d", de.Error(), row, col)
		}
		return nil, []error{fe("toml_parse", "TOML parsing failed", details,
			"Check for syntax errors like missing quotes, brackets, or commas", -1)}
	}
	if msg := mixedArray(doc); msg != "" {
		// gemini-cli's TOML parser (TOML 0.5) refuses what TOML 1.0 allows.
		return nil, []error{fe("toml_parse", "TOML parsing failed", msg,
			"Check for syntax errors like missing quotes, brackets, or commas", -1)}
	}
	raws, issues := validateFile(doc)
	if len(issues) > 0 {
		return nil, []error{fe("schema_validation", "Schema validation failed",
			"Invalid policy rule (rule #1):\n"+strings.Join(issues, "\n"),
			"Ensure all required fields (decision, priority) are present with correct types", -1)}
	}
	var errs []error
	for i, r := range raws {
		if msg := validateShellSyntax(r, i); msg != "" {
			errs = append(errs, fe("rule_validation", "Invalid shell command syntax", msg, "", i))
		}
	}
	for i, r := range raws {
		if slicesContains(r.toolNames, "") {
			errs = append(errs, fe("rule_validation", "Invalid policy rule: toolName cannot be empty string",
				fmt.Sprintf(`Rule #%d contains an empty toolName string. Use "*" to match all tools.`, i+1), "", i))
			continue
		}
		for _, n := range r.toolNames {
			if w := validateToolName(n, i); w != "" {
				e := fe("tool_name_warning", "Unrecognized tool name", w, "", i)
				e.Warning = true
				errs = append(errs, e)
			}
		}
	}
	src := tier.String() + ": " + filepath.Base(source)
	var rules []Rule
	for i, r := range raws {
		for _, ap := range r.argsPatterns() {
			for _, name := range r.toolNames {
				if name == "" || (r.mcpName != nil && *r.mcpName == "") || (r.subagent != nil && *r.subagent == "") {
					// gemini-cli's engine refuses these at construction; the
					// rule is dropped here (reported above for toolName).
					if name != "" {
						errs = append(errs, fe("rule_validation", "Invalid policy rule: mcpName and subagent cannot be empty strings",
							fmt.Sprintf("Rule #%d has an empty mcpName or subagent.", i+1), "", i))
					}
					continue
				}
				rule := Rule{
					ToolName:         name,
					Decision:         r.decision,
					Priority:         float64(tier) + float64(r.priority)/1000,
					Modes:            r.modes,
					Interactive:      r.interactive,
					ToolAnnotations:  r.annotations,
					AllowRedirection: r.allowRedirection,
					DenyMessage:      r.denyMessage,
					Source:           src,
					ArgsPattern:      ap.pattern,
					CommandPrefix:    ap.prefix,
				}
				if r.subagent != nil {
					rule.Subagent = *r.subagent
				}
				if r.mcpName != nil {
					rule.MCPName = *r.mcpName
					rule.ToolName = formatMCPToolName(*r.mcpName, name)
				}
				if checkPatterns && ap.pattern != "" {
					if _, err := checkJSRegexp(ap.pattern); err != nil {
						errs = append(errs, fe("regex_compilation", "Invalid regex pattern",
							"Pattern: "+ap.pattern+"\nError: "+err.Error(),
							"Check regex syntax for errors like unmatched brackets or invalid escape sequences", -1))
						continue
					}
					if !isSafeRegExp(ap.pattern) {
						errs = append(errs, fe("regex_compilation", "Unsafe regex pattern (potential ReDoS)",
							"Pattern: "+ap.pattern, "Avoid nested quantifiers or extremely long patterns", -1))
						continue
					}
				}
				rules = append(rules, rule)
			}
		}
	}
	return rules, errs
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// rawRule is a [[rule]] table after schema validation.
type rawRule struct {
	toolNames        []string
	toolNameIsArray  bool
	subagent         *string
	mcpName          *string
	argsPattern      *string
	commandPrefix    []string
	prefixIsArray    bool
	hasPrefix        bool
	commandRegex     *string
	decision         Decision
	priority         int64
	modes            []Mode
	interactive      *bool
	annotations      map[string]any
	allowRedirection bool
	denyMessage      string
}

type argsPat struct{ pattern, prefix string }

// argsPatterns is gemini-cli's buildArgsPatterns: one pattern per command
// prefix, or the command regex, or the args pattern (or none).
func (r rawRule) argsPatterns() []argsPat {
	if r.hasPrefix && (r.prefixIsArray || r.commandPrefix[0] != "") {
		out := make([]argsPat, 0, len(r.commandPrefix))
		for _, p := range r.commandPrefix {
			out = append(out, argsPat{CommandPrefixPattern(p), p})
		}
		return out
	}
	if r.commandRegex != nil && *r.commandRegex != "" {
		return []argsPat{{`"command":"` + *r.commandRegex, ""}}
	}
	if r.argsPattern != nil {
		return []argsPat{{*r.argsPattern, ""}}
	}
	return []argsPat{{}}
}

func validateShellSyntax(r rawRule, i int) string {
	hasRegex := r.commandRegex != nil
	if !r.hasPrefix && !hasRegex {
		return ""
	}
	if r.toolNameIsArray || len(r.toolNames) != 1 || r.toolNames[0] != shellToolName {
		var found string
		if r.toolNameIsArray {
			b, _ := json.Marshal(r.toolNames)
			found = string(b)
		} else {
			b, _ := json.Marshal(r.toolNames[0])
			found = string(b)
		}
		return fmt.Sprintf("Rule #%d: commandPrefix and commandRegex can only be used with toolName = \"run_shell_command\"\n  Found: toolName = %s\n  Fix: Set toolName = \"run_shell_command\" (not an array)", i+1, found)
	}
	if r.argsPattern != nil {
		return fmt.Sprintf("Rule #%d: cannot use both commandPrefix/commandRegex and argsPattern\n  These fields are mutually exclusive\n  Fix: Use either commandPrefix/commandRegex OR argsPattern, not both", i+1)
	}
	if r.hasPrefix && hasRegex {
		return fmt.Sprintf("Rule #%d: cannot use both commandPrefix and commandRegex\n  These fields are mutually exclusive\n  Fix: Use either commandPrefix OR commandRegex, not both", i+1)
	}
	return ""
}

// mixedArray finds an inline array mixing value types, which TOML 0.5
// (@iarna/toml, gemini-cli's parser) refuses.
func mixedArray(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if m := mixedArray(e); m != "" {
				return m
			}
		}
	case []any:
		tables := true
		for _, e := range x {
			if _, ok := e.(map[string]any); !ok {
				tables = false
			}
		}
		if !tables && len(x) > 0 {
			first := tomlTypeName(x[0])
			for _, e := range x[1:] {
				if t := tomlTypeName(e); t != first {
					return "Inline lists must be a single type, not a mixture of " + first + " and " + t
				}
			}
		}
		for _, e := range x {
			if m := mixedArray(e); m != "" {
				return m
			}
		}
	}
	return ""
}

func tomlTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "inline-table"
	}
	return "datetime"
}

// zodType is the type name zod reports for a TOML value.
func zodType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "number"
	case float64:
		if math.IsNaN(x) {
			return "nan"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case time.Time, toml.LocalDate, toml.LocalDateTime, toml.LocalTime:
		return "date"
	}
	return "unknown"
}

func issue(path, msg string) string { return `  - Field "` + path + `": ` + msg }

// validateFile checks the document against gemini-cli's schema and returns
// the rules, or zod's issues.
func validateFile(doc map[string]any) ([]rawRule, []string) {
	var issues []string
	var rules []rawRule
	if v, ok := doc["rule"]; ok {
		arr, ok := v.([]any)
		if !ok {
			issues = append(issues, issue("rule", "Expected array, received "+zodType(v)))
		}
		for i, e := range arr {
			r, is := validateRule(e, fmt.Sprintf("rule.%d", i))
			issues = append(issues, is...)
			rules = append(rules, r)
		}
	}
	if v, ok := doc["safety_checker"]; ok {
		arr, ok := v.([]any)
		if !ok {
			issues = append(issues, issue("safety_checker", "Expected array, received "+zodType(v)))
		}
		for i, e := range arr {
			issues = append(issues, validateChecker(e, fmt.Sprintf("safety_checker.%d", i))...)
		}
	}
	return rules, issues
}

func stringOrArray(m map[string]any, key, path string, required bool) (vals []string, isArray, present bool, issues []string) {
	v, ok := m[key]
	if !ok {
		if required {
			issues = append(issues, issue(path+"."+key, "Required"))
		}
		return nil, false, false, issues
	}
	switch x := v.(type) {
	case string:
		return []string{x}, false, true, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, true, true, []string{issue(path+"."+key, "Invalid input")}
			}
			out = append(out, s)
		}
		return out, true, true, nil
	}
	return nil, false, true, []string{issue(path+"."+key, "Invalid input")}
}

func optString(m map[string]any, key, path string, issues *[]string) *string {
	v, ok := m[key]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		*issues = append(*issues, issue(path+"."+key, "Expected string, received "+zodType(v)))
		return nil
	}
	return &s
}

func optBool(m map[string]any, key, path string, issues *[]string) *bool {
	v, ok := m[key]
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		*issues = append(*issues, issue(path+"."+key, "Expected boolean, received "+zodType(v)))
		return nil
	}
	return &b
}

func enumIssue(v any, values string) string {
	if s, ok := v.(string); ok {
		return "Invalid enum value. Expected " + values + ", received '" + s + "'"
	}
	if f, ok := normalizeTOML(v).(float64); ok {
		return "Invalid enum value. Expected " + values + ", received '" + string(appendJSNumber(nil, f)) + "'"
	}
	return "Expected " + values + ", received " + zodType(v)
}

const decisionValues = "'allow' | 'deny' | 'ask_user'"
const modeValues = "'default' | 'autoEdit' | 'yolo' | 'plan'"

func validateModes(m map[string]any, path string, issues *[]string) []Mode {
	v, ok := m["modes"]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		*issues = append(*issues, issue(path+".modes", "Expected array, received "+zodType(v)))
		return nil
	}
	modes := make([]Mode, 0, len(arr))
	for j, e := range arr {
		s, _ := e.(string)
		switch Mode(s) {
		case ModeDefault, ModeAutoEdit, ModeYolo, ModePlan:
			modes = append(modes, Mode(s))
		default:
			*issues = append(*issues, issue(fmt.Sprintf("%s.modes.%d", path, j), enumIssue(e, modeValues)))
		}
	}
	return modes
}

func validateAnnotations(m map[string]any, path string, issues *[]string) map[string]any {
	v, ok := m["toolAnnotations"]
	if !ok {
		return nil
	}
	t, ok := v.(map[string]any)
	if !ok {
		*issues = append(*issues, issue(path+".toolAnnotations", "Expected object, received "+zodType(v)))
		return nil
	}
	return normalizeTOML(t).(map[string]any)
}

// normalizeTOML turns TOML integers into float64, as JavaScript numbers.
func normalizeTOML(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeTOML(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeTOML(e)
		}
		return out
	}
	return v
}

func validateRule(e any, path string) (rawRule, []string) {
	var r rawRule
	m, ok := e.(map[string]any)
	if !ok {
		return r, []string{issue(path, "Expected object, received "+zodType(e))}
	}
	var issues []string
	names, isArr, _, is := stringOrArray(m, "toolName", path, true)
	issues = append(issues, is...)
	r.toolNames, r.toolNameIsArray = names, isArr
	r.subagent = optString(m, "subagent", path, &issues)
	r.mcpName = optString(m, "mcpName", path, &issues)
	r.argsPattern = optString(m, "argsPattern", path, &issues)
	pre, preArr, present, is := stringOrArray(m, "commandPrefix", path, false)
	issues = append(issues, is...)
	r.commandPrefix, r.prefixIsArray, r.hasPrefix = pre, preArr, present && len(is) == 0
	r.commandRegex = optString(m, "commandRegex", path, &issues)
	if v, ok := m["decision"]; !ok {
		issues = append(issues, issue(path+".decision", "Required"))
	} else if s, _ := v.(string); s != "" {
		d, err := ParseDecision(s)
		if err != nil {
			issues = append(issues, issue(path+".decision", enumIssue(v, decisionValues)))
		}
		r.decision = d
	} else {
		issues = append(issues, issue(path+".decision", enumIssue(v, decisionValues)))
	}
	switch v := m["priority"].(type) {
	case nil:
		issues = append(issues, issue(path+".priority", "priority is required"))
	case int64:
		r.priority = v
		issues = append(issues, priorityRange(float64(v), path)...)
	case float64:
		if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
			issues = append(issues, issue(path+".priority", "priority must be an integer"))
		}
		issues = append(issues, priorityRange(v, path)...)
		r.priority = int64(v)
	default:
		issues = append(issues, issue(path+".priority", "priority must be a number"))
	}
	r.modes = validateModes(m, path, &issues)
	r.interactive = optBool(m, "interactive", path, &issues)
	r.annotations = validateAnnotations(m, path, &issues)
	ar := optBool(m, "allowRedirection", path, &issues)
	ar2 := optBool(m, "allow_redirection", path, &issues)
	switch {
	case ar != nil:
		r.allowRedirection = *ar
	case ar2 != nil:
		r.allowRedirection = *ar2
	}
	dm := optString(m, "denyMessage", path, &issues)
	dm2 := optString(m, "deny_message", path, &issues)
	switch {
	case dm != nil:
		r.denyMessage = *dm
	case dm2 != nil:
		r.denyMessage = *dm2
	}
	return r, issues
}

func priorityRange(v float64, path string) []string {
	var is []string
	if v < 0 {
		is = append(is, issue(path+".priority", "priority must be >= 0"))
	}
	if v > 999 {
		is = append(is, issue(path+".priority", "priority must be <= 999 to prevent tier overflow. Priorities >= 1000 would jump to the next tier."))
	}
	return is
}

// validateChecker checks a [[safety_checker]] table against gemini-cli's
// schema; agentry runs no safety checkers, so a valid one is ignored.
func validateChecker(e any, path string) []string {
	m, ok := e.(map[string]any)
	if !ok {
		return []string{issue(path, "Expected object, received "+zodType(e))}
	}
	var issues []string
	_, _, _, is := stringOrArray(m, "toolName", path, true)
	issues = append(issues, is...)
	optString(m, "mcpName", path, &issues)
	optString(m, "argsPattern", path, &issues)
	_, _, _, is = stringOrArray(m, "commandPrefix", path, false)
	issues = append(issues, is...)
	optString(m, "commandRegex", path, &issues)
	if v, ok := m["priority"]; ok {
		switch x := v.(type) {
		case int64:
		case float64:
			if x != math.Trunc(x) {
				issues = append(issues, issue(path+".priority", "Expected integer, received float"))
			}
		default:
			issues = append(issues, issue(path+".priority", "Expected number, received "+zodType(v)))
		}
	}
	validateModes(m, path, &issues)
	validateAnnotations(m, path, &issues)
	c, ok := m["checker"]
	if !ok {
		return append(issues, issue(path+".checker", "Required"))
	}
	cm, ok := c.(map[string]any)
	if !ok {
		return append(issues, issue(path+".checker", "Expected object, received "+zodType(c)))
	}
	switch cm["type"] {
	case "in-process":
		if n, _ := cm["name"].(string); n != "allowed-path" && n != "conseca" {
			issues = append(issues, issue(path+".checker.name", enumIssue(cm["name"], "'allowed-path' | 'conseca'")))
		}
	case "external":
		if _, ok := cm["name"].(string); !ok {
			if cm["name"] == nil {
				issues = append(issues, issue(path+".checker.name", "Required"))
			} else {
				issues = append(issues, issue(path+".checker.name", "Expected string, received "+zodType(cm["name"])))
			}
		}
	default:
		issues = append(issues, issue(path+".checker.type", "Invalid discriminator value. Expected 'in-process' | 'external'"))
	}
	return issues
}

// CommandPrefixPattern is the argsPattern gemini-cli builds for a
// commandPrefix: `"command":` and the JSON-encoded prefix without its
// closing quote, regex-escaped, then (?:[\s"]|\\") — so "git" matches
// "git status" but not "gitx".
func CommandPrefixPattern(prefix string) string {
	enc := appendJSString(nil, prefix)
	return escapeRegex(`"command":`+string(enc[:len(enc)-1])) + `(?:[\s"]|\\")`
}

// escapeRegex is gemini-cli's escapeRegex: /[-[\]{}()*+?.,\\^$|#\s"]/ escaped.
func escapeRegex(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`-[]{}()*+?.,\^$|#"`, r) || isJSSpace(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

//go:embed policies/*.toml
var defaultPolicies embed.FS

// Defaults returns the bundled default policies (gemini-cli 0.61.0's
// policies/*.toml, agentry's tool names being gemini-cli's) at TierDefault,
// files in name order. Each call parses the embedded files (a few hundred
// microseconds): call it once per engine.
func Defaults() []Rule {
	names, err := fs.Glob(defaultPolicies, "policies/*.toml")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	var rules []Rule
	for _, n := range names {
		data, err := defaultPolicies.ReadFile(n)
		if err != nil {
			panic(err)
		}
		// The bundled patterns are checked by a test (and by New); they
		// are not checked again at every start.
		r, errs := parse(data, TierDefault, n, false)
		for _, e := range errs {
			if fe, ok := e.(*FileError); !ok || !fe.Warning {
				panic(fmt.Sprintf("policy: bundled %s: %v", n, e))
			}
		}
		rules = append(rules, r...)
	}
	return rules
}
