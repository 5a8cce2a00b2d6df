package runtime

import (
	"fmt"
	"testing"

	"google.golang.org/adk/v2/model"

	"github.com/agentry-dev/agentry/policy"
	"github.com/agentry-dev/agentry/tools"
)

// benchTools are 60 tools: the 9 built-ins' names and 51 tools of three
// MCP servers.
func benchTools() []tools.Tool {
	ts := []tools.Tool{}
	for _, n := range []string{"read_file", "read_many_files", "glob", "grep_search", "list_directory", "replace", "write_file", "run_shell_command", "invoke_agent"} {
		kind := tools.KindRead
		switch n {
		case "replace", "write_file":
			kind = tools.KindEdit
		case "run_shell_command":
			kind = tools.KindExecute
		case "invoke_agent":
			kind = tools.KindAgent
		}
		ts = append(ts, &fakeTool{ToolName: n, ToolKind: kind})
	}
	for i := 0; len(ts) < 60; i++ {
		ts = append(ts, newServerTool(fmt.Sprintf("srv%d", i%3), fmt.Sprintf("tool%d", i)))
	}
	return ts
}

// BenchmarkDeclarations measures the declaration path of one model
// request: every tool's ProcessRequest packing it into the request.
// exclusion=off has no policy exclusion (as before it existed);
// exclusion=cached is the steady state, mode and rules unchanged since
// the last request, with a human to ask (no tool excluded: the same 60
// declarations as off); exclusion=recomputed changes the mode before
// every request, so the exclusion is computed again; exclusion=headless
// is cached without a human, where the defaults exclude most tools (200
// rules: the bundled defaults and user rules, as policy's benchmarks).
func BenchmarkDeclarations(b *testing.B) {
	ts := benchTools()
	rules := policy.Defaults()
	for i := 0; len(rules) < 200; i++ {
		rules = append(rules, policy.Rule{ToolName: fmt.Sprintf("mcp_srv%d_tool%d", i%3, i), Decision: policy.Deny,
			ArgsPattern: "secret", Priority: 4 + float64(i%900)/1000, Source: "User: bench.toml"})
	}
	engine, err := policy.New(rules)
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewPolicyWith(ApprovalDefault, engine)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.AddToolRules(ts); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"off", "cached", "recomputed", "headless"} {
		b.Run("exclusion="+mode, func(b *testing.B) {
			var excl *toolExclusion
			if mode != "off" {
				snap := newToolTable(ts, nil, nil, nil, nil).current()
				excl = newToolExclusion(p, mode != "headless", func() *toolSnap { return snap })
			}
			sts := make([]*scheduledTool, len(ts))
			for i, t := range ts {
				sts[i] = &scheduledTool{t: t, policy: p, excl: excl}
			}
			modes := []ApprovalMode{ApprovalDefault, ApprovalAutoEdit}
			declared := 0
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if mode == "recomputed" {
					_ = p.SetMode(modes[i%2])
				}
				req := &model.LLMRequest{}
				for _, st := range sts {
					if err := st.ProcessRequest(nil, req); err != nil {
						b.Fatal(err)
					}
				}
				declared = len(req.Tools)
			}
			_ = p.SetMode(ApprovalDefault)
			b.ReportMetric(float64(declared), "declared")
		})
	}
}
