package policy

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// golden.json holds what gemini-cli 0.61.0's own policy engine decides,
// loads and writes for the cases of testdata/gemini/gen.mjs
// (TestGoldenCurrent regenerates it with the installed gemini-cli and
// compares).
type golden struct {
	Generator string `json:"generator"`
	Workspace string `json:"workspace"`
	Parse     []struct {
		Name   string       `json:"name"`
		Tier   Tier         `json:"tier"`
		TOML   string       `json:"toml"`
		Rules  []goldenRule `json:"rules"`
		Errors []string     `json:"errors"`
	} `json:"parse"`
	Engine []struct {
		Name     string `json:"name"`
		Policies []struct {
			Tier Tier   `json:"tier"`
			TOML string `json:"toml"`
		} `json:"policies"`
		Defaults           bool `json:"defaults"`
		DisableAlwaysAllow bool `json:"disableAlwaysAllow"`
		Calls              []struct {
			Call goldenCall `json:"call"`
			Want struct {
				Decision    string `json:"decision"`
				Source      string `json:"source"`
				DenyMessage string `json:"denyMessage"`
			} `json:"want"`
		} `json:"calls"`
	} `json:"engine"`
	Stable []struct {
		Args map[string]any `json:"args"`
		Want string         `json:"want"`
	} `json:"stable"`
	Regex []struct {
		Pattern string `json:"pattern"`
		Valid   bool   `json:"valid"`
		Matches []struct {
			S     string `json:"s"`
			Match bool   `json:"match"`
		} `json:"matches"`
	} `json:"regex"`
}

type goldenRule struct {
	ToolName         string         `json:"toolName"`
	MCPName          string         `json:"mcpName"`
	Subagent         string         `json:"subagent"`
	ArgsPattern      string         `json:"argsPattern"`
	Decision         string         `json:"decision"`
	Priority         float64        `json:"priority"`
	Modes            []Mode         `json:"modes"`
	Interactive      *bool          `json:"interactive"`
	ToolAnnotations  map[string]any `json:"toolAnnotations"`
	AllowRedirection bool           `json:"allowRedirection"`
	DenyMessage      string         `json:"denyMessage"`
	Source           string         `json:"source"`
}

type goldenCall struct {
	Tool        string         `json:"tool"`
	Server      string         `json:"server"`
	ServerTool  string         `json:"serverTool"`
	Args        map[string]any `json:"args"`
	Annotations map[string]any `json:"annotations"`
	Subagent    string         `json:"subagent"`
	Mode        Mode           `json:"mode"`
	Interactive bool           `json:"interactive"`
	Trusted     bool           `json:"trusted"`
}

func loadGolden(t *testing.T, path string) *golden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// jsSource is RegExp#source: "/" escaped outside classes, as V8 prints it.
func jsSource(p string) string {
	var b strings.Builder
	inClass, esc := false, false
	for _, r := range p {
		switch {
		case esc:
			esc = false
		case r == '\\':
			esc = true
		case r == '[':
			inClass = true
		case r == ']':
			inClass = false
		case r == '/' && !inClass:
			b.WriteString(`\/`)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func summary(r Rule) goldenRule {
	return goldenRule{ToolName: r.ToolName, MCPName: r.MCPName, Subagent: r.Subagent, ArgsPattern: jsSource(r.ArgsPattern),
		Decision: r.Decision.String(), Priority: r.Priority, Modes: r.Modes, Interactive: r.Interactive,
		ToolAnnotations: r.ToolAnnotations, AllowRedirection: r.AllowRedirection, DenyMessage: r.DenyMessage, Source: r.Source}
}

// tomlErrorHead keeps what agentry can share of a TOML syntax error: the
// lines before the parser's own details (@iarna/toml's and go-toml's differ).
func tomlErrorHead(s string) string {
	if strings.Contains(s, "TOML parsing failed") {
		lines := strings.Split(s, "\n")
		return strings.Join(lines[:2], "\n") + "\n…\n" + lines[len(lines)-1]
	}
	return s
}

func TestGoldenParse(t *testing.T) {
	g := loadGolden(t, "testdata/gemini/golden.json")
	for _, c := range g.Parse {
		t.Run(c.Name, func(t *testing.T) {
			rules, errs := Parse([]byte(c.TOML), c.Tier, "/some/dir/case.toml")
			got := make([]goldenRule, 0, len(rules))
			for _, r := range rules {
				got = append(got, summary(r))
			}
			want := []goldenRule{}
			for _, r := range c.Rules {
				// gemini-cli keeps a rule with an empty toolName, which its
				// engine then refuses at construction; agentry drops it.
				if r.ToolName != "" {
					want = append(want, r)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rules (-gemini-cli +agentry):\n%s", diff)
			}
			var gotErrs, wantErrs []string
			for _, e := range errs {
				gotErrs = append(gotErrs, tomlErrorHead(e.Error()))
			}
			for _, e := range c.Errors {
				wantErrs = append(wantErrs, tomlErrorHead(e))
			}
			if diff := cmp.Diff(wantErrs, gotErrs); diff != "" {
				t.Errorf("errors (-gemini-cli +agentry):\n%s", diff)
			}
		})
	}
}

func TestGoldenEngine(t *testing.T) {
	g := loadGolden(t, "testdata/gemini/golden.json")
	for _, c := range g.Engine {
		t.Run(c.Name, func(t *testing.T) {
			var rules []Rule
			if c.Defaults {
				rules = Defaults()
			}
			for _, p := range c.Policies {
				r, errs := Parse([]byte(p.TOML), p.Tier, "policy.toml")
				for _, e := range errs {
					t.Fatalf("policy: %v", e)
				}
				rules = append(rules, r...)
			}
			var opts []Option
			if c.DisableAlwaysAllow {
				opts = append(opts, WithoutAlwaysAllow())
			}
			e, err := New(rules, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range c.Calls {
				gc := tc.Call
				call := Call{Tool: gc.Tool, Server: gc.Server, ServerTool: gc.ServerTool, Args: gc.Args, Annotations: gc.Annotations,
					Subagent: gc.Subagent, Mode: gc.Mode, Interactive: gc.Interactive, Trusted: gc.Trusted, Workspace: g.Workspace}
				res := e.Check(call)
				var src, dm string
				if res.Rule != nil {
					src, dm = res.Rule.Source, res.Rule.DenyMessage
				}
				if res.Decision.String() != tc.Want.Decision || src != tc.Want.Source || dm != tc.Want.DenyMessage {
					t.Errorf("%s %v mode=%s interactive=%v trusted=%v: got %s (%q, %q), gemini-cli %s (%q, %q)",
						gc.Tool, gc.Args, gc.Mode, gc.Interactive, gc.Trusted, res.Decision, src, dm, tc.Want.Decision, tc.Want.Source, tc.Want.DenyMessage)
				}
			}
		})
	}
}

func TestGoldenStableJSON(t *testing.T) {
	g := loadGolden(t, "testdata/gemini/golden.json")
	for _, c := range g.Stable {
		if got := StableJSON(c.Args); got != c.Want {
			t.Errorf("StableJSON(%v)\n got %q\nwant %q", c.Args, got, c.Want)
		}
	}
}

func TestGoldenRegex(t *testing.T) {
	g := loadGolden(t, "testdata/gemini/golden.json")
	for _, c := range g.Regex {
		re, err := CompileJSRegexp(c.Pattern)
		// Rules check their pattern without compiling it: the check must
		// refuse exactly what compiling refuses, with the same message.
		if _, cerr := checkJSRegexp(c.Pattern); fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Errorf("%q: checkJSRegexp error %v, CompileJSRegexp error %v", c.Pattern, cerr, err)
		}
		if (err == nil) != c.Valid {
			t.Errorf("%q: compile error %v, JavaScript valid=%v", c.Pattern, err, c.Valid)
			continue
		}
		for _, m := range c.Matches {
			if got := re.MatchString(m.S); got != m.Match {
				t.Errorf("/%s/.test(%q) = %v, JavaScript %v", c.Pattern, m.S, got, m.Match)
			}
		}
	}
}

// TestGoldenCurrent regenerates golden.json with the gemini-cli of
// AGENTRY_TEST_GEMINI_CLI (node testdata/gemini/gen.mjs) and compares: the
// golden file is what gemini-cli 0.61.0 itself decides.
func TestGoldenCurrent(t *testing.T) {
	bin := os.Getenv("AGENTRY_TEST_GEMINI_CLI")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("AGENTRY_TEST_GEMINI_CLI is not set (gemini-cli 0.61.0's executable)")
		}
		t.Skip("AGENTRY_TEST_GEMINI_CLI is not set")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(filepath.Dir(filepath.Dir(bin)), "@google", "gemini-cli", "bundle")
	out := filepath.Join(t.TempDir(), "golden.json")
	cmd := exec.CommandContext(t.Context(), node, "testdata/gemini/gen.mjs", bundle, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.mjs: %v\n%s", err, b)
	}
	want, err := os.ReadFile("testdata/gemini/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("golden.json is stale (-checked in +regenerated); regenerate with node testdata/gemini/gen.mjs %s testdata/gemini/golden.json:\n%s", bundle, diff)
	}
}

func TestGoldenShellParse(t *testing.T) {
	var g struct {
		ShellParse []struct {
			Line    string `json:"line"`
			Details []struct {
				Name  string `json:"name"`
				Text  string `json:"text"`
				Start int    `json:"start"`
			} `json:"details"`
			HasError  bool     `json:"hasError"`
			Roots     []string `json:"roots"`
			Redirects bool     `json:"redirects"`
			Stripped  string   `json:"stripped"`
		} `json:"shellParse"`
	}
	data, err := os.ReadFile("testdata/gemini/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	for _, c := range g.ShellParse {
		p := parseCommandDetails(c.Line, nil)
		if p.hasError != c.HasError {
			t.Errorf("%q: hasError %v, tree-sitter %v", c.Line, p.hasError, c.HasError)
		}
		if !c.HasError {
			var got, want []string
			for _, d := range p.details {
				got = append(got, fmt.Sprintf("%s|%s|%d", d.name, d.text, d.start))
			}
			for _, d := range c.Details {
				want = append(want, fmt.Sprintf("%s|%s|%d", d.Name, d.Text, d.Start))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: details\n got %q\nwant %q", c.Line, got, want)
			}
		}
		if roots := commandRoots(c.Line, nil); !slices.Equal(roots, c.Roots) && !(len(roots) == 0 && len(c.Roots) == 0) {
			t.Errorf("%q: roots %q, want %q", c.Line, roots, c.Roots)
		}
		if r := hasRedirection(c.Line, nil); r != c.Redirects {
			t.Errorf("%q: redirects %v, want %v", c.Line, r, c.Redirects)
		}
		if s := stripShellWrapper(c.Line); s != c.Stripped {
			t.Errorf("%q: stripped %q, want %q", c.Line, s, c.Stripped)
		}
	}
}

// TestGoldenSaved: an auto-saved.toml written by gemini-cli's policy
// updater loads into agentry's engine, agentry's Saver updates it in place
// (keeping its entries), and agentry's own file for the same answers
// loads into the same rules — except the path rule, whose "\\0" anchors
// (gemini-cli's defect) never match while agentry's do.
func TestGoldenSaved(t *testing.T) {
	var g struct {
		Saved struct {
			File string `json:"file"`
		} `json:"saved"`
	}
	data, err := os.ReadFile("testdata/gemini/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "gemini", "auto-saved.toml")
	if err := os.MkdirAll(filepath.Dir(theirs), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte(g.Saved.File), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(p string) []Rule {
		t.Helper()
		rules, errs := LoadPaths([]string{p}, TierUser)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return rules
	}
	geminiRules := load(theirs)

	// The same answers through AlwaysRules and a Saver.
	ours := NewSaver(filepath.Join(dir, "agentry", "auto-saved.toml"))
	save := func(s *Saver, c Call) {
		t.Helper()
		r, _, err := AlwaysRules(c, ProceedAlwaysAndSave)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(r...); err != nil {
			t.Fatal(err)
		}
	}
	shellCall := Call{Tool: "run_shell_command", Args: map[string]any{"command": "git status && npm test > x"}, Mode: ModeDefault}
	save(ours, shellCall)
	save(ours, Call{Tool: "read_file", Args: map[string]any{"file_path": "src/a.go"}, Mode: ModeDefault})
	save(ours, Call{Tool: "query", Server: "db", ServerTool: "query", Mode: ModeAutoEdit})
	save(ours, Call{Tool: "web_fetch", Args: map[string]any{}, Mode: ModePlan})
	shellCall.Mode = ModeYolo
	save(ours, shellCall)
	agentryRules := load(ours.Path())

	key := func(r Rule) string {
		p := r.ArgsPattern
		if r.ToolName == "read_file" {
			p = "<path>"
		}
		return fmt.Sprintf("%s|%s|%s|%s|%v|%v|%.3f|%s", r.ToolName, r.MCPName, r.CommandPrefix, p, r.Modes, r.AllowRedirection, r.Priority, r.Decision)
	}
	var a, b []string
	for _, r := range geminiRules {
		a = append(a, key(r))
	}
	for _, r := range agentryRules {
		b = append(b, key(r))
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("rules (-gemini-cli's file +agentry's):\n%s", diff)
	}
	read := Call{Tool: "read_file", Args: map[string]any{"file_path": "src/a.go"}, Mode: ModeDefault, Interactive: true}
	for name, rules := range map[string][]Rule{"gemini-cli": geminiRules, "agentry": agentryRules} {
		e, err := New(rules)
		if err != nil {
			t.Fatal(err)
		}
		r := e.Check(read)
		if matched := r.Rule != nil; matched != (name == "agentry") {
			t.Errorf("%s's saved read_file rule matched=%v", name, matched)
		}
	}

	// agentry's Saver on gemini-cli's file: the shell entry updated, nothing lost.
	save(NewSaver(theirs), Call{Tool: "run_shell_command", Args: map[string]any{"command": "git log | npm x"}, Mode: ModeAutoEdit})
	after := load(theirs)
	if len(after) != len(geminiRules) {
		t.Fatalf("%d rules after agentry's save, %d before", len(after), len(geminiRules))
	}
	if !slices.Equal(after[0].Modes, []Mode{ModeAutoEdit, ModeYolo}) || !after[0].AllowRedirection {
		t.Errorf("updated shell rule %+v", after[0])
	}
}

func TestCheckJSRegexpRefusesWhatCompileRefuses(t *testing.T) {
	for _, p := range []string{"(", "a)", "*", "a**", "[", "[b-a]", "a{2,1}", "a{1001}", `\`, "(?<=a)b", `(a)\1`, "x{2}{3}", `[\d-z]`, "ok", `\u0041`} {
		_, cerr := checkJSRegexp(p)
		_, err := CompileJSRegexp(p)
		if fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Errorf("%q: checkJSRegexp error %v, CompileJSRegexp error %v", p, cerr, err)
		}
	}
	if _, err := checkJSRegexp("("); err == nil {
		t.Error(`checkJSRegexp("(") accepted an unterminated group`)
	}
}

func TestBundledPoliciesPassEveryCheck(t *testing.T) {
	names, err := fs.Glob(defaultPolicies, "policies/*.toml")
	if err != nil || len(names) == 0 {
		t.Fatalf("bundled policies: %v %v", names, err)
	}
	for _, n := range names {
		data, err := defaultPolicies.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		checked, errs := Parse(data, TierDefault, n)
		for _, e := range errs {
			if fe, ok := e.(*FileError); !ok || !fe.Warning {
				t.Errorf("%s: %v", n, e)
			}
		}
		unchecked, _ := parse(data, TierDefault, n, false)
		if !reflect.DeepEqual(checked, unchecked) {
			t.Errorf("%s: Parse and the parse Defaults uses disagree:\n%v\n%v", n, checked, unchecked)
		}
	}
}
