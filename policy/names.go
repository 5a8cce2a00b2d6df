package policy

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf16"
)

// The tool names the engine treats specially (gemini-cli's, which agentry
// shares).
const (
	shellToolName = "run_shell_command"
	agentToolName = "invoke_agent"
	mcpToolPrefix = "mcp_"
	discoveredPfx = "discovered_tool_"
	alwaysFrac    = 950
)

// builtinToolNames is gemini-cli 0.61.0's ALL_BUILTIN_TOOL_NAMES: the names
// a rule's toolName is compared with for near-miss warnings.
var builtinToolNames = [...]string{
	"glob", "write_todos", "write_file", "google_web_search", "web_fetch",
	"replace", "run_shell_command", "grep_search", "read_many_files",
	"read_file", "list_directory", "activate_skill", "ask_user",
	"tracker_create_task", "tracker_update_task", "tracker_get_task",
	"tracker_list_tasks", "tracker_add_dependency", "tracker_visualize",
	"get_internal_docs", "enter_plan_mode", "exit_plan_mode", "update_topic",
	"complete_task", "invoke_agent", "read_mcp_resource", "list_mcp_resources",
}

// legacyAliases is gemini-cli's TOOL_LEGACY_ALIASES: old name → current name.
var legacyAliases = [...][2]string{
	{"search_file_content", "grep_search"},
}

// isShellTool reports whether name is one of gemini-cli's SHELL_TOOL_NAMES.
func isShellTool(name string) bool { return name == shellToolName || name == "ShellTool" }

// toolAliases returns the names a call to name is matched under: the name,
// its current name and every legacy name of that current name
// (gemini-cli's getToolAliases). It appends to dst.
func toolAliases(dst []string, name string) []string {
	dst = append(dst, name)
	canonical := name
	for _, a := range legacyAliases {
		if a[0] == name {
			canonical = a[1]
		}
	}
	if canonical != name {
		dst = append(dst, canonical)
	}
	for _, a := range legacyAliases {
		if a[1] == canonical && a[0] != name {
			dst = append(dst, a[0])
		}
	}
	return dst
}

func isMCPToolName(name string) bool { return strings.HasPrefix(name, mcpToolPrefix) }

// parseMCPToolName splits mcp_<server>_<tool>; the server name has no "_".
func parseMCPToolName(name string) (server, tool string) {
	if !isMCPToolName(name) {
		return "", ""
	}
	rest := name[len(mcpToolPrefix):]
	i := strings.IndexByte(rest, '_')
	if i <= 0 || i == len(rest)-1 {
		return "", ""
	}
	return rest[:i], rest[i+1:]
}

// formatMCPToolName is gemini-cli's formatMcpToolName.
func formatMCPToolName(server, tool string) string {
	switch {
	case server == "*" && (tool == "" || tool == "*"):
		return mcpToolPrefix + "*"
	case server == "*":
		return mcpToolPrefix + "*_" + tool
	case tool == "" || tool == "*":
		return mcpToolPrefix + server + "_*"
	}
	return mcpToolPrefix + server + "_" + tool
}

var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^[a-z0-9_.:-]+$`) })

// isValidToolName is gemini-cli's isValidToolName with wildcards allowed.
func isValidToolName(name string) bool {
	for _, n := range builtinToolNames {
		if n == name {
			return true
		}
	}
	for _, a := range legacyAliases {
		if a[0] == name {
			return true
		}
	}
	if strings.HasPrefix(name, discoveredPfx) || name == "*" {
		return true
	}
	if !isMCPToolName(name) {
		return false
	}
	if name == mcpToolPrefix+"*" {
		return true
	}
	if strings.HasPrefix(name, mcpToolPrefix+"_") {
		return false
	}
	server, tool := parseMCPToolName(name)
	if server == "" || tool == "" {
		return false
	}
	if !slugRE().MatchString(server) {
		return false
	}
	if tool == "*" {
		return true
	}
	if strings.Trim(tool, "_") == "" {
		return false
	}
	return slugRE().MatchString(tool)
}

// levenshtein is the edit distance over UTF-16 code units (fast-levenshtein's).
func levenshtein(a, b string) int {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	if len(x) == 0 {
		return len(y)
	}
	if len(y) == 0 {
		return len(x)
	}
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// toolSuggestion is gemini-cli's getToolSuggestion: the three nearest names
// (a stable sort by distance).
func toolSuggestion(name string, all []string) string {
	type m struct {
		name string
		d    int
	}
	ms := make([]m, len(all))
	for i, n := range all {
		ms[i] = m{n, levenshtein(name, n)}
	}
	// insertion sort: stable, like Array.prototype.sort.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].d < ms[j-1].d; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	if len(ms) > 3 {
		ms = ms[:3]
	}
	if len(ms) == 0 {
		return ""
	}
	q := make([]string, len(ms))
	for i, x := range ms {
		q[i] = `"` + x.name + `"`
	}
	if len(q) > 1 {
		return " Did you mean one of: " + strings.Join(q, ", ") + "?"
	}
	return " Did you mean " + q[0] + "?"
}

// validateToolName returns gemini-cli's warning for a rule's tool name, "" when none.
func validateToolName(name string, ruleIndex int) string {
	if strings.Contains(name, "__") {
		return ruleNo(ruleIndex) + `: The "__" syntax for MCP tools is strictly deprecated. Please use the 'mcpName = "..."' property or the 'mcp_server_tool' format instead.`
	}
	if isValidToolName(name) {
		return ""
	}
	best := -1
	for _, n := range builtinToolNames {
		if d := levenshtein(name, n); best < 0 || d < best {
			best = d
		}
	}
	if best > 3 {
		return ""
	}
	return ruleNo(ruleIndex) + `: Unrecognized tool name "` + name + `".` + toolSuggestion(name, builtinToolNames[:])
}

func ruleNo(i int) string { return "Rule #" + itoa(i+1) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
