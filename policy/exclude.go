package policy

// Tool is a tool as Excluded sees it: its name and, for a tool of an MCP
// server, the server, the tool's own name there and its annotations.
type Tool struct {
	// Name is the tool's name (for an MCP tool, the name it is declared
	// under; Server and ServerTool then name it).
	Name string
	// Server is the MCP server's name, "" for a built-in tool.
	Server string
	// ServerTool is the tool's own name on its server ("" defaults to Name).
	ServerTool string
	// Annotations are the MCP tool's annotations; nil for built-ins.
	Annotations map[string]any
}

// Excluded reports whether the rules deny every call of t in mode, so that
// the tool is not offered to the model at all: gemini-cli's
// PolicyEngine.getExcludedTools. The rules are tried in priority order as
// if they had no argsPattern: the first that applies to the tool decides —
// one with an argsPattern keeps the tool unless it denies (a deny rule
// with an argsPattern is skipped), one without excludes the tool when it
// denies. When no rule applies, the default decides: a session with
// nobody to ask (interactive false) denies, so the tool is excluded; yolo
// mode allows. Rules with a subagent key never apply (gemini-cli asks
// without one).
func (e *Engine) Excluded(t Tool, mode Mode, interactive bool) bool {
	x := checkCtx{
		rules:       *e.snap.Load(),
		noAlw:       e.noAlw,
		mode:        mode,
		interactive: interactive,
		server:      t.Server,
		annotations: t.Annotations,
	}
	x.mode = normalMode(x.mode)
	x.modeBit = modeBit(x.mode)
	name := callName(t.Name, t.Server, t.ServerTool)
	names := []string{name}
	for i := range x.rules {
		c := &x.rules[i]
		if x.noAlw && c.always {
			continue
		}
		if c.rule.Subagent != "" || !x.matchesTool(c, names) {
			continue
		}
		if c.re != nil {
			if c.rule.Decision != Deny {
				return false
			}
			continue
		}
		return c.rule.Decision == Deny
	}
	return x.mode != ModeYolo && !interactive
}
