package policy

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Engine decides tool calls from rules sorted by priority, highest first.
// It is safe for concurrent use: Check reads an immutable snapshot without
// locking; Add replaces the snapshot.
type Engine struct {
	mu      sync.Mutex // serialises Add
	snap    atomic.Pointer[[]compiled]
	ver     atomic.Uint64 // counts the snapshots Add stored
	noAlw   bool
	parsers sync.Pool // *syntax.Parser, reused across checks
}

// compiled is a rule with what Check needs precomputed.
type compiled struct {
	rule      Rule
	re        func() argsRegexp // the compiled ArgsPattern, nil without one
	modes     uint8             // bit set of modes; 0: every mode
	nameKind  uint8
	mcpServer string // nameMCPServer: the server of mcp_<srv>_*
	mcpPrefix string // nameMCPServer: "mcp_<srv>_"
	ruleIsMCP bool   // the tool name starts with mcp_
	shortFull string // rule.MCPName set and a short tool name: its full name
	always    bool   // an "always allow" rule (priority fraction .950)
	prefix    bool   // came from a commandPrefix
}

// argsRegexp is a rule's compiled argsPattern.
type argsRegexp struct {
	re        *regexp.Regexp
	litPrefix string // a literal every match of re contains
}

const (
	nameExact uint8 = iota
	nameAny
	nameMCPAny
	nameMCPServer
)

func modeBit(m Mode) uint8 {
	switch m {
	case ModeDefault, "":
		return 1
	case ModeAutoEdit:
		return 2
	case ModeYolo:
		return 4
	case ModePlan:
		return 8
	}
	return 16
}

type options struct {
	noAlwaysAllow bool
}

// Option configures an Engine.
type Option func(*options)

// WithoutAlwaysAllow skips the rules of "always" answers (a priority whose
// fraction is .950), as gemini-cli's security.disableAlwaysAllow and
// admin.secureModeEnabled do.
func WithoutAlwaysAllow() Option {
	return func(o *options) { o.noAlwaysAllow = true }
}

// New returns an Engine over rules: it compiles their argument patterns
// (JavaScript syntax translated to RE2) and stable-sorts them by priority,
// highest first. A rule without a tool name, with an invalid decision or a
// pattern that does not compile is an error wrapping ErrInvalidRule.
func New(rules []Rule, opts ...Option) (*Engine, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	e := &Engine{noAlw: o.noAlwaysAllow}
	e.parsers.New = func() any { return newBashParser() }
	cs, err := compileRules(rules)
	if err != nil {
		return nil, err
	}
	sortCompiled(cs)
	e.snap.Store(&cs)
	return e, nil
}

func compileRules(rules []Rule) ([]compiled, error) {
	cs := make([]compiled, 0, len(rules))
	for i := range rules {
		c, err := compileRule(rules[i])
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func compileRule(r Rule) (compiled, error) {
	src := r.Source
	if src == "" {
		src = "unknown"
	}
	if r.ToolName == "" {
		return compiled{}, fmt.Errorf("%w: toolName is required. Use '*' for all tools. Rule source: %s", ErrInvalidRule, src)
	}
	switch r.Decision {
	case Allow, AskUser, Deny:
	default:
		return compiled{}, fmt.Errorf("%w: decision %v. Rule source: %s", ErrInvalidRule, r.Decision, src)
	}
	r.Modes = slices.Clone(r.Modes)
	if r.CommandPrefix != "" && r.ArgsPattern == "" {
		r.ArgsPattern = CommandPrefixPattern(r.CommandPrefix)
	}
	c := compiled{rule: r}
	for _, m := range r.Modes {
		c.modes |= modeBit(m)
	}
	if r.ArgsPattern != "" {
		// Checked now, compiled when a call first reaches the rule: most
		// rules apply to modes or tools a run never uses.
		expr, err := checkJSRegexp(r.ArgsPattern)
		if err != nil {
			return compiled{}, fmt.Errorf("%w: argsPattern: %w. Rule source: %s", ErrInvalidRule, err, src)
		}
		c.re = sync.OnceValue(func() argsRegexp {
			a := argsRegexp{re: regexp.MustCompile(expr)}
			a.litPrefix, _ = a.re.LiteralPrefix()
			return a
		})
	}
	switch {
	case r.ToolName == "*":
		c.nameKind = nameAny
	case r.ToolName == mcpToolPrefix+"*":
		c.nameKind = nameMCPAny
	case strings.HasPrefix(r.ToolName, mcpToolPrefix) && strings.HasSuffix(r.ToolName, "_*") && len(r.ToolName) >= len(mcpToolPrefix)+2:
		c.nameKind = nameMCPServer
		c.mcpServer = r.ToolName[len(mcpToolPrefix) : len(r.ToolName)-2]
		c.mcpPrefix = mcpToolPrefix + c.mcpServer + "_"
	}
	c.ruleIsMCP = isMCPToolName(r.ToolName)
	if r.MCPName != "" && !c.ruleIsMCP {
		c.shortFull = formatMCPToolName(r.MCPName, r.ToolName)
	}
	c.always = isAlwaysAllowPriority(r.Priority)
	c.prefix = r.CommandPrefix != ""
	return c, nil
}

func isAlwaysAllowPriority(p float64) bool {
	return math.Round(math.Mod(p, 1)*1000) == alwaysFrac
}

func sortCompiled(cs []compiled) {
	slices.SortStableFunc(cs, func(a, b compiled) int {
		switch {
		case a.rule.Priority > b.rule.Priority:
			return -1
		case a.rule.Priority < b.rule.Priority:
			return 1
		}
		return 0
	})
}

// Add adds rules (the session's "always" answers) and keeps the order:
// highest priority first, earlier rules first among equals.
func (e *Engine) Add(rules ...Rule) error {
	add, err := compileRules(rules)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := *e.snap.Load()
	cs := make([]compiled, 0, len(old)+len(add))
	cs = append(cs, old...)
	cs = append(cs, add...)
	sortCompiled(cs)
	e.snap.Store(&cs)
	e.ver.Add(1)
	return nil
}

// Version returns a number that changes whenever Add changes the rules, so
// that what is derived from them (the tools Excluded hides) can be cached
// per version.
func (e *Engine) Version() uint64 { return e.ver.Load() }

// Rules returns a copy of the rules in decision order.
func (e *Engine) Rules() []Rule {
	cs := *e.snap.Load()
	out := make([]Rule, len(cs))
	for i := range cs {
		out[i] = cs[i].rule
		out[i].Modes = slices.Clone(cs[i].rule.Modes)
	}
	return out
}

// checkCtx is what stays the same through one Check and its recursive
// shell checks.
type checkCtx struct {
	rules       []compiled
	noAlw       bool
	mode        Mode
	modeBit     uint8
	interactive bool
	trusted     bool
	subagent    string
	server      string
	annotations map[string]any
	workspace   string
	parsers     *sync.Pool
}

func (x *checkCtx) defaultDecision() Decision {
	if x.interactive {
		return AskUser
	}
	return Deny
}

// Check decides a call: the decision of the first matching rule (a shell
// command then split and checked command by command, with gemini-cli's
// heuristics), else the default: allow in yolo mode, ask when
// interactive, deny otherwise. Result.Rule points into the engine's
// snapshot and must not be modified.
//
// An MCP call (Server set) is matched under its full name
// mcp_<Server>_<ServerTool>, as gemini-cli names MCP tools.
func (e *Engine) Check(c Call) Result {
	x := checkCtx{
		rules:       *e.snap.Load(),
		noAlw:       e.noAlw,
		mode:        c.Mode,
		interactive: c.Interactive,
		trusted:     c.Trusted,
		subagent:    c.Subagent,
		server:      c.Server,
		annotations: c.Annotations,
		workspace:   c.Workspace,
		parsers:     &e.parsers,
	}
	x.mode = normalMode(x.mode)
	x.modeBit = modeBit(x.mode)
	name := callName(c.Tool, c.Server, c.ServerTool)
	if x.server == "" {
		if s, ok := c.Annotations["_serverName"].(string); ok {
			x.server = s
		}
	}
	if x.server == "" {
		x.server, _ = parseMCPToolName(name)
	}
	d, r := x.check(name, c.Args, false)
	res := Result{Decision: d, Rule: r}
	if d == Deny && r != nil {
		res.DenyMessage = r.DenyMessage
	}
	return res
}

// argsJSON is the lazily built stable JSON of one call's arguments.
type argsJSON struct {
	args map[string]any
	s    string
	done bool
}

func (a *argsJSON) get() string {
	if !a.done {
		a.s = StableJSON(a.args)
		a.done = true
	}
	return a.s
}

// check is gemini-cli's PolicyEngine.check for one call.
func (x *checkCtx) check(name string, args map[string]any, skipHeuristics bool) (Decision, *Rule) {
	var namesBuf [4]string
	names := toolAliases(namesBuf[:0], name)
	if name == agentToolName {
		if a, ok := args["agent_name"].(string); ok {
			names = append(names, a)
		}
	}
	isShell := isShellTool(name)
	var command, dirPath string
	if isShell {
		command, _ = args["command"].(string)
		dirPath, _ = args["dir_path"].(string)
	}
	aj := argsJSON{args: args}
	var decision Decision
	var matched *Rule
	found := false
	for i := range x.rules {
		c := &x.rules[i]
		if x.noAlw && c.always {
			continue
		}
		if !x.matches(c, names, args, &aj) {
			continue
		}
		d := c.rule.Decision
		if !skipHeuristics && isShell && command != "" && !c.prefix && c.re == nil {
			d = x.shellHeuristics(command, d, dirPath)
		}
		if isShell {
			decision, matched = x.checkShell(name, command, d, dirPath, c.rule.AllowRedirection, &c.rule)
		} else {
			decision, matched = d, &c.rule
		}
		found = true
		break
	}
	if !found {
		switch {
		case x.mode == ModeYolo:
			decision = Allow
		case isShell:
			d := x.defaultDecision()
			if !skipHeuristics && command != "" {
				d = x.shellHeuristics(command, d, dirPath)
			}
			decision, matched = x.checkShell(name, command, d, dirPath, false, nil)
		default:
			decision = x.defaultDecision()
		}
	}
	if decision == Allow {
		if x.permissionsOutside(args) {
			decision = AskUser
		}
		if decision == Allow && isEditTool(names) {
			if p := filePathArg(args); p != "" && isBuildFile(strings.TrimSpace(p), x.workspace) {
				decision = x.defaultDecision()
				matched = &Rule{ToolName: name, Decision: decision, Priority: math.MaxInt64,
					Source: "Build File Protection", DenyMessage: "Modifying build configuration files requires explicit user confirmation"}
			}
		}
	}
	return decision, matched
}

// matches is gemini-cli's ruleMatches, over the names a call is tried under.
func (x *checkCtx) matches(c *compiled, names []string, args map[string]any, aj *argsJSON) bool {
	if !x.matchesTool(c, names) {
		return false
	}
	if c.re != nil {
		if args == nil {
			return false
		}
		j := aj.get()
		re := c.re()
		if re.litPrefix != "" && !strings.Contains(j, re.litPrefix) {
			return false
		}
		if !re.re.MatchString(j) {
			return false
		}
	}
	return true
}

// matchesTool is matches without the rule's argsPattern (as gemini-cli's
// getExcludedTools matches a rule against a tool).
func (x *checkCtx) matchesTool(c *compiled, names []string) bool {
	r := &c.rule
	if c.modes != 0 && c.modes&x.modeBit == 0 {
		return false
	}
	if r.Subagent != "" && r.Subagent != x.subagent {
		return false
	}
	if r.MCPName != "" {
		if r.MCPName == "*" {
			if x.server == "" {
				return false
			}
		} else if x.server != r.MCPName {
			return false
		}
	}
	if !x.nameMatches(c, names) {
		return false
	}
	if r.ToolAnnotations != nil {
		if x.annotations == nil {
			return false
		}
		for k, v := range r.ToolAnnotations {
			av, ok := x.annotations[k]
			if !ok || !jsStrictEqual(av, v) {
				return false
			}
		}
	}
	if r.Interactive != nil && *r.Interactive != x.interactive {
		return false
	}
	return true
}

func (x *checkCtx) nameMatches(c *compiled, names []string) bool {
	for _, n := range names {
		if x.nameMatch(c, n) {
			return true
		}
	}
	return false
}

func (x *checkCtx) nameMatch(c *compiled, name string) bool {
	switch c.nameKind {
	case nameAny:
		return true
	case nameMCPAny:
		return name != "" && x.server != ""
	case nameMCPServer:
		return name != "" && x.server == c.mcpServer && strings.HasPrefix(name, c.mcpPrefix)
	}
	if name == c.rule.ToolName {
		return true
	}
	if x.server == "" || name == "" {
		return false
	}
	if c.shortFull != "" && name == c.shortFull {
		return true
	}
	return c.ruleIsMCP && isMCPFullName(c.rule.ToolName, x.server, name)
}

// isMCPFullName reports whether full == formatMCPToolName(server, tool),
// without building it.
func isMCPFullName(full, server, tool string) bool {
	if server == "*" || tool == "" || tool == "*" {
		return full == formatMCPToolName(server, tool)
	}
	rest, ok := strings.CutPrefix(full, mcpToolPrefix)
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(rest, server)
	return ok && len(rest) == len(tool)+1 && rest[0] == '_' && rest[1:] == tool
}

// jsStrictEqual is JavaScript's === for annotation values: primitives by
// value (numbers as numbers), objects never.
func jsStrictEqual(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && fa == fb
	}
	switch av := a.(type) {
	case nil:
		return b == nil
	case string:
		bv, ok := b.(string)
		return ok && av == bv
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// shellHeuristics is gemini-cli's applyShellHeuristics over the whole
// command line's shell-quote words.
func (x *checkCtx) shellHeuristics(command string, d Decision, dirPath string) Decision {
	if d == Deny {
		return Deny
	}
	args, err := shellArgs(command)
	if err != nil {
		return d
	}
	outside := cwdOutside(x.workspace, dirPath)
	if outside && x.mode != ModeYolo {
		return AskUser
	}
	git := containsGitCommand(args)
	if git && !x.trusted {
		return AskUser
	}
	if isDangerousCommand(args) {
		if x.mode == ModeYolo {
			return d
		}
		return AskUser
	}
	if d == AskUser && isKnownSafeCommand(args, newWorkspaceView(x.workspace, dirPath), x.parsers) {
		if outside {
			return AskUser
		}
		return Allow
	}
	return d
}

func (x *checkCtx) downgradeForRedirection(command string, allowRedirection bool) bool {
	if allowRedirection || x.mode == ModeAutoEdit || x.mode == ModeYolo {
		return false
	}
	return hasRedirection(command, x.parsers)
}

// checkShell is gemini-cli's checkShellCommand: the line parsed, every
// command in it checked on its own, the strictest decision kept.
func (x *checkCtx) checkShell(tool, command string, ruleDecision Decision, dirPath string, allowRedirection bool, rule *Rule) (Decision, *Rule) {
	if command == "" {
		return ruleDecision, rule
	}
	parsed := parseCommandDetails(command, x.parsers)
	if len(parsed.details) == 0 || parsed.hasError {
		if ruleDecision == Deny {
			return Deny, rule
		}
		if x.mode == ModeYolo {
			if rule != nil && rule.ArgsPattern != "" {
				return Deny, rule
			}
			return Allow, rule
		}
		return x.defaultDecision(), rule
	}
	if ruleDecision == Deny {
		return Deny, rule
	}
	agg := ruleDecision
	var responsible *Rule
	if rule != nil && ruleDecision == rule.Decision {
		responsible = rule
	}
	if agg == Allow && x.downgradeForRedirection(command, allowRedirection) {
		agg = AskUser
		responsible = nil
	}
	sub := func(cmd string) (Decision, *Rule) {
		a := map[string]any{"command": cmd}
		if dirPath != "" {
			a["dir_path"] = dirPath
		}
		return x.check(tool, a, true)
	}
	for _, det := range parsed.details {
		if isRedirectionName(det.name) {
			continue
		}
		subCmd := strings.TrimSpace(det.text)
		atomic := subCmd == command || (det.start == 0 && len(det.text) == len(command))
		if stripped := stripShellWrapper(subCmd); stripped != subCmd {
			d, r := sub(stripped)
			if d == Deny {
				return d, r
			}
			if d == AskUser {
				if agg == Allow || responsible == nil {
					responsible = r
				}
				agg = AskUser
			}
		}
		if !atomic {
			d, r := sub(subCmd)
			if d == Deny {
				return d, r
			}
			if d == AskUser {
				if agg == Allow || responsible == nil {
					responsible = r
				}
				agg = AskUser
			}
			if d == Allow && agg == Allow && x.downgradeForRedirection(subCmd, allowRedirection) {
				agg = AskUser
				responsible = nil
			}
		}
	}
	if agg == ruleDecision {
		return agg, rule
	}
	return agg, responsible
}

// permissionsOutside: an allowed call whose additional_permissions name a
// path outside the workspace is asked about.
func (x *checkCtx) permissionsOutside(args map[string]any) bool {
	ap, ok := args["additional_permissions"].(map[string]any)
	if !ok {
		return false
	}
	fsPerms, ok := ap["fileSystem"].(map[string]any)
	if !ok {
		return false
	}
	for _, key := range []string{"read", "write"} {
		list, _ := fsPerms[key].([]any)
		for _, p := range list {
			s, ok := p.(string)
			if !ok {
				continue
			}
			if x.workspace == "" {
				if filepath.IsAbs(s) || escapesRelative(s) {
					return true
				}
				continue
			}
			t := s
			if !filepath.IsAbs(t) {
				t = filepath.Join(x.workspace, t)
			}
			if !isSubpath(filepath.Clean(x.workspace), filepath.Clean(t)) {
				return true
			}
		}
	}
	return false
}

var editKeywords = map[string]bool{"write": true, "edit": true, "replace": true, "patch": true,
	"update": true, "create": true, "append": true, "save": true}

// isEditTool is gemini-cli's file-edit test for build file protection:
// replace, write_file, or a name with an editing word in it.
func isEditTool(names []string) bool {
	for _, n := range names {
		if n == "replace" || n == "write_file" {
			return true
		}
		// The lower-cased name split at every character that is not a
		// letter or digit (an upper-case ASCII letter is lowered, so it
		// does not split).
		start := -1
		for i := 0; i <= len(n); i++ {
			alnum := false
			if i < len(n) {
				c := n[i]
				alnum = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
			}
			if alnum {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && i-start <= 7 && editKeywords[strings.ToLower(n[start:i])] {
				return true
			}
			start = -1
		}
	}
	return false
}

func filePathArg(args map[string]any) string {
	for _, k := range []string{"file_path", "path", "filePath", "file"} {
		if v, ok := args[k]; ok && v != nil {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

var buildFileNames = map[string]bool{"BUILD": true, "BUILD.bazel": true, "WORKSPACE": true, "WORKSPACE.bazel": true,
	"MODULE.bazel": true, ".bazelrc": true, ".blazerc": true, "Makefile": true, "makefile": true, "GNUmakefile": true,
	"CMakeLists.txt": true, "package.json": true, "package-lock.json": true, "pnpm-lock.yaml": true, "yarn.lock": true,
	"bun.lockb": true, "setup.py": true, "setup.cfg": true, "pyproject.toml": true, "go.mod": true, "go.sum": true,
	"Cargo.toml": true, "Cargo.lock": true, "pom.xml": true, "build.gradle": true, "build.gradle.kts": true,
	"settings.gradle": true, "settings.gradle.kts": true, "Dockerfile": true, "Containerfile": true}

// isBuildFile is gemini-cli's isBuildFile: the base name of the path
// (symbolic links resolved) is a build configuration file.
func isBuildFile(p, workspace string) bool {
	if p == "" {
		return false
	}
	p = strings.ReplaceAll(strings.ReplaceAll(p, "\x00", ""), `\`, "/")
	if !filepath.IsAbs(p) && workspace != "" {
		p = filepath.Join(workspace, p)
	}
	p = realPath(filepath.Clean(p))
	base := filepath.Base(p)
	if buildFileNames[base] || strings.HasPrefix(base, "Dockerfile.") || strings.HasPrefix(base, "Containerfile.") {
		return true
	}
	switch strings.ToLower(filepath.Ext(base)) {
	case ".bzl", ".bazel", ".bzlmod", ".mk", ".cmake":
		return true
	}
	return false
}

// normalMode is m with "" read as the default mode and the CLI's
// "auto_edit" as autoEdit.
func normalMode(m Mode) Mode {
	switch m {
	case "":
		return ModeDefault
	case "auto_edit":
		return ModeAutoEdit
	}
	return m
}

// callName is the name a call of tool is matched under: an MCP tool's full
// mcp_<server>_<tool> name whatever it was declared to the model as.
func callName(tool, server, serverTool string) string {
	if server == "" {
		return tool
	}
	if serverTool == "" {
		serverTool = tool
	}
	return mcpToolPrefix + server + "_" + serverTool
}
