package policy

import (
	"fmt"
	"testing"
)

// benchRules is 200 rules: the bundled defaults (73) and a mix of exact
// names, wildcards, MCP servers and tools, argument patterns, command
// prefixes and modes, as a user with many policies would have.
func benchRules(b *testing.B) []Rule {
	rules := Defaults()
	for i := 0; len(rules) < 200; i++ {
		var r Rule
		switch i % 8 {
		case 0:
			r = Rule{ToolName: fmt.Sprintf("custom_tool_%d", i), Decision: Allow}
		case 1:
			r = Rule{ToolName: fmt.Sprintf("mcp_srv%d_*", i), MCPName: fmt.Sprintf("srv%d", i), Decision: Allow}
		case 2:
			r = Rule{ToolName: fmt.Sprintf("tool%d", i), MCPName: fmt.Sprintf("srv%d", i), Decision: Deny}
		case 3:
			r = Rule{ToolName: "read_file", ArgsPattern: fmt.Sprintf(`\x00"file_path":"secret%d[^"]*"\x00`, i), Decision: Deny}
		case 4:
			r = Rule{ToolName: "run_shell_command", CommandPrefix: fmt.Sprintf("tool%d", i), ArgsPattern: CommandPrefixPattern(fmt.Sprintf("tool%d", i)), Decision: Allow}
		case 5:
			r = Rule{ToolName: fmt.Sprintf("agent_%d", i), Modes: []Mode{ModeAutoEdit, ModeYolo}, Decision: Allow}
		case 6:
			r = Rule{ToolName: "*", MCPName: "*", ToolAnnotations: map[string]any{"destructiveHint": true}, Modes: []Mode{ModePlan}, Decision: Deny}
		case 7:
			r = Rule{ToolName: fmt.Sprintf("write_%d", i), Subagent: "scout", Decision: Deny}
		}
		r.Priority = 4 + float64(i%900)/1000
		r.Source = "User: bench.toml"
		rules = append(rules, r)
	}
	rules = append(rules[:199], Rule{ToolName: "run_shell_command", CommandPrefix: "git", ArgsPattern: CommandPrefixPattern("git"), Decision: Allow, Priority: 4.1})
	if len(rules) != 200 {
		b.Fatalf("%d rules", len(rules))
	}
	return rules
}

func BenchmarkCheck(b *testing.B) {
	e, err := New(benchRules(b))
	if err != nil {
		b.Fatal(err)
	}
	calls := []struct {
		name string
		call Call
		want Decision
	}{
		{"builtin_read", Call{Tool: "read_file", Args: map[string]any{"file_path": "src/main.go"}, Mode: ModeDefault, Interactive: true, Trusted: true}, Allow},
		{"mcp", Call{Tool: "query", Server: "db", ServerTool: "query", Args: map[string]any{"sql": "select 1"}, Annotations: map[string]any{"readOnlyHint": true}, Mode: ModeDefault, Interactive: true, Trusted: true}, AskUser},
		{"shell_prefix", Call{Tool: "run_shell_command", Args: map[string]any{"command": "git status"}, Mode: ModeDefault, Interactive: true, Trusted: true}, Allow},
	}
	for _, c := range calls {
		if got := e.Check(c.call).Decision; got != c.want {
			b.Fatalf("%s: %s, want %s", c.name, got, c.want)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Check(c.call)
			}
		})
	}
}

// BenchmarkDefaults is the cost of Defaults (parsing the embedded files),
// paid once per engine.
func BenchmarkDefaults(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Defaults()
	}
}

// BenchmarkCheckCompoundShell is a shell line of several commands under
// the defaults: each command is parsed and checked on its own.
func BenchmarkCheckCompoundShell(b *testing.B) {
	e, err := New(benchRules(b))
	if err != nil {
		b.Fatal(err)
	}
	c := Call{Tool: "run_shell_command", Args: map[string]any{"command": "git status && go test ./... | tee out.txt"}, Mode: ModeDefault, Interactive: true, Trusted: true}
	b.ReportAllocs()
	for b.Loop() {
		e.Check(c)
	}
}
