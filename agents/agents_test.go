package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []Definition
	}{
		{"local with every field", `---
name: code-reader
kind: local
display_name: Code Reader
description: Reads code.
tools: [read_file, "grep_*", mcp_github_*]
model: gemini-2.5-flash
temperature: 0.2
max_turns: 12
timeout_mins: 3
---

You read code.
Carefully.
`, []Definition{{Name: "code-reader", Kind: KindLocal, DisplayName: "Code Reader", Description: "Reads code.",
			Tools: []string{"read_file", "grep_*", "mcp_github_*"}, Model: "gemini-2.5-flash", Temperature: ptr(0.2),
			MaxTurns: 12, TimeoutMins: 3, SystemPrompt: "You read code.\nCarefully.", File: "a.md"}}},
		{"local, kind implied, CRLF and BOM", "\ufeff---\r\nname: r\r\ndescription: d\r\n---\r\nPrompt.\r\n",
			[]Definition{{Name: "r", Kind: KindLocal, Description: "d", SystemPrompt: "Prompt.", File: "a.md"}}},
		{"empty tools list gives no tools", "---\nname: r\ndescription: d\ntools: []\n---\n",
			[]Definition{{Name: "r", Kind: KindLocal, Description: "d", Tools: []string{}, File: "a.md"}}},
		{"closing line at the end of the file", "---\nname: r\ndescription: d\n---",
			[]Definition{{Name: "r", Kind: KindLocal, Description: "d", File: "a.md"}}},
		{"remote implied by its card url", `---
name: reviewer
agent_card_url: https://agents.example.com/.well-known/agent-card.json
auth:
  type: http
  scheme: Bearer
  token: $REVIEW_TOKEN
---
`, []Definition{{Name: "reviewer", Kind: KindRemote, AgentCardURL: "https://agents.example.com/.well-known/agent-card.json",
			Auth: &Auth{Type: "http", Scheme: "Bearer", Token: "$REVIEW_TOKEN"}, File: "a.md"}}},
		{"remote with an inline card as a mapping", `---
kind: remote
name: inline
agent_card_json:
  name: Inline
  url: http://127.0.0.1:9/
---
`, []Definition{{Name: "inline", Kind: KindRemote, AgentCardJSON: `{"name":"Inline","url":"http://127.0.0.1:9/"}`, File: "a.md"}}},
		{"a list is many remote agents", `---
- name: one
  agent_card_url: http://127.0.0.1:1/card
  auth: {type: apiKey, key: k, agent_card_requires_auth: true}
- name: two
  agent_card_json: '{"name": "two"}'
  auth: {type: http, scheme: Basic, username: u, password: '${PW}'}
---
`, []Definition{
			{Name: "one", Kind: KindRemote, AgentCardURL: "http://127.0.0.1:1/card", Auth: &Auth{Type: "apiKey", Key: "k", AgentCardRequiresAuth: true}, File: "a.md"},
			{Name: "two", Kind: KindRemote, AgentCardJSON: `{"name": "two"}`, Auth: &Auth{Type: "http", Scheme: "Basic", Username: "u", Password: "${PW}"}, File: "a.md"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("a.md", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseErrors: every problem names the file, the line and the field,
// and says what to do.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"no front matter", "You read code.\n", `agent definition a.md: missing YAML front matter: the file must start with a "---" line, the fields, and another "---" line (---\nname: my-agent\ndescription: …\n---)`},
		{"not closed", "---\nname: r\ndescription: d\n", `agent definition a.md: the front matter is not closed: add a "---" line after the fields`},
		{"empty", "---\n---\nbody\n", `agent definition a.md: the front matter is empty: it needs at least name and description`},
		{"bad YAML", "---\nname: [r\n---\n", `agent definition a.md:2: the front matter is not valid YAML: did not find expected ',' or ']'`},
		{"a scalar", "---\njust text\n---\n", `agent definition a.md:2: the front matter must be a mapping of fields (name: …, description: …)`},
		{"missing name", "---\ndescription: d\n---\n", `agent definition a.md:2: name: missing: every agent needs a name (lower-case letters, digits, - and _)`},
		{"bad name", "---\nname: Code Reader\ndescription: d\n---\n", `agent definition a.md:2: name: "Code Reader" is not a valid name: use lower-case letters, digits, - and _`},
		{"name not a string", "---\nname: [a]\ndescription: d\n---\n", `agent definition a.md:2: name: must be a string`},
		{"missing description", "---\nname: r\n---\n", `agent definition a.md:2: description: missing or empty: the parent's model chooses agents by their description`},
		{"blank description", "---\nname: r\ndescription: '  '\n---\n", `agent definition a.md:3: description: missing or empty: the parent's model chooses agents by their description`},
		{"unknown field", "---\nname: r\ndescription: d\nmaxTurns: 3\n---\n", `agent definition a.md:4: maxTurns: unknown field for a local agent (the fields are kind, name, description, display_name, tools, model, temperature, max_turns, timeout_mins)`},
		{"remote field on a local agent", "---\nkind: local\nname: r\ndescription: d\nauth: {type: apiKey, key: k}\n---\n", `agent definition a.md:5: auth: unknown field for a local agent (the fields are kind, name, description, display_name, tools, model, temperature, max_turns, timeout_mins)`},
		{"twice", "---\nname: r\nname: s\ndescription: d\n---\n", `agent definition a.md:3: name: given twice`},
		{"bad kind", "---\nkind: cloud\nname: r\ndescription: d\n---\n", `agent definition a.md:2: kind: must be local or remote, not "cloud"`},
		{"mcp_servers", "---\nname: r\ndescription: d\nmcp_servers: {}\n---\n", `agent definition a.md:4: mcp_servers: not supported: configure the server under mcpServers in settings and list its tools (mcp_<server>_*) in tools`},
		{"policy", "---\nname: r\ndescription: d\npolicy: {}\n---\n", `agent definition a.md:4: policy: not supported: the agent's calls follow the session's approval mode and tools.allowed`},
		{"tools not a list", "---\nname: r\ndescription: d\ntools: read_file\n---\n", `agent definition a.md:4: tools: must be a list of tool names, e.g. [read_file, glob]`},
		{"bad tool", "---\nname: r\ndescription: d\ntools:\n  - read_file\n  - rm -rf\n---\n", `agent definition a.md:6: tools[1]: "rm -rf" is not a tool name or pattern`},
		{"bad pattern", "---\nname: r\ndescription: d\ntools: ['read_[']\n---\n", `agent definition a.md:4: tools[0]: "read_[" is not a tool name or pattern`},
		{"max_turns zero", "---\nname: r\ndescription: d\nmax_turns: 0\n---\n", `agent definition a.md:4: max_turns: must be a positive whole number, not "0"`},
		{"max_turns text", "---\nname: r\ndescription: d\nmax_turns: ten\n---\n", `agent definition a.md:4: max_turns: must be a positive whole number, not "ten"`},
		{"timeout fraction", "---\nname: r\ndescription: d\ntimeout_mins: 1.5\n---\n", `agent definition a.md:4: timeout_mins: must be a positive whole number, not "1.5"`},
		{"temperature too high", "---\nname: r\ndescription: d\ntemperature: 3\n---\n", `agent definition a.md:4: temperature: must be a number from 0 to 2, not "3"`},
		{"temperature text", "---\nname: r\ndescription: d\ntemperature: warm\n---\n", `agent definition a.md:4: temperature: must be a number from 0 to 2, not "warm"`},
		{"remote without a card", "---\nkind: remote\nname: r\n---\n", `agent definition a.md:2: agent_card_url: missing: a remote agent needs agent_card_url (or agent_card_json)`},
		{"remote with both", "---\nname: r\nagent_card_url: http://h/c\nagent_card_json: '{}'\n---\n", `agent definition a.md:4: agent_card_json: give agent_card_url or agent_card_json, not both`},
		{"remote bad url", "---\nname: r\nagent_card_url: ftp://h/c\n---\n", `agent definition a.md:3: agent_card_url: "ftp://h/c" is not an http(s) URL`},
		{"remote relative url", "---\nname: r\nagent_card_url: /card.json\n---\n", `agent definition a.md:3: agent_card_url: "/card.json" is not an http(s) URL`},
		{"remote card not JSON", "---\nname: r\nagent_card_json: 'name: x'\n---\n", `agent definition a.md:3: agent_card_json: must be an agent card as a JSON object`},
		{"remote card a list", "---\nname: r\nagent_card_json: [1]\n---\n", `agent definition a.md:3: agent_card_json: must be an agent card: a JSON object, or a mapping`},
		{"local field on a remote agent", "---\nname: r\nagent_card_url: http://h/c\ntools: [a]\n---\n", `agent definition a.md:4: tools: unknown field for a remote agent (the fields are kind, name, description, display_name, agent_card_url, agent_card_json, auth)`},
		{"auth not a mapping", "---\nname: r\nagent_card_url: http://h/c\nauth: token\n---\n", `agent definition a.md:4: auth: must be a mapping: type apiKey (key, name) or type http (scheme Bearer with token, or Basic with username and password)`},
		{"auth bad type", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: oauth}\n---\n", `agent definition a.md:4: auth.type: must be apiKey or http, not "oauth"`},
		{"apiKey without key", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: apiKey}\n---\n", `agent definition a.md:4: auth.key: missing`},
		{"bearer without token", "---\nname: r\nagent_card_url: http://h/c\nauth:\n  type: http\n  scheme: Bearer\n---\n", `agent definition a.md:5: auth.token: missing`},
		{"basic without password", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: http, scheme: Basic, username: u}\n---\n", `agent definition a.md:4: auth.password: missing`},
		{"bad scheme", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: http, scheme: Digest}\n---\n", `agent definition a.md:4: auth.scheme: must be Bearer or Basic, not "Digest"`},
		{"auth command", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: apiKey, key: '!pass show k'}\n---\n", `agent definition a.md:4: auth.key: commands (!…) are not run: put the secret in an environment variable and write $NAME`},
		{"auth unknown field", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: apiKey, key: k, in: query}\n---\n", `agent definition a.md:4: auth.in: unknown field for apiKey auth (the fields are type, key, name, agent_card_requires_auth)`},
		{"auth flag not a bool", "---\nname: r\nagent_card_url: http://h/c\nauth: {type: apiKey, key: k, agent_card_requires_auth: yes please}\n---\n", `agent definition a.md:4: auth.agent_card_requires_auth: must be true or false`},
		{"a list with a local agent", "---\n- name: r\n  description: d\n---\n", `agent definition a.md:2: [0].agent_card_url: missing: a remote agent needs agent_card_url (or agent_card_json)`},
		{"a list saying local", "---\n- name: r\n  kind: local\n---\n", `agent definition a.md:3: [0].kind: a list of agents may hold only remote agents`},
		{"an empty list", "---\n[]\n---\n", `agent definition a.md: the front matter is an empty list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("a.md", []byte(tc.file))
			if err == nil {
				t.Fatal("accepted")
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Errorf("%T is not a *LoadError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestAllowsTool(t *testing.T) {
	all := Definition{}
	some := Definition{Tools: []string{"read_file", "grep_*", "mcp_github_*", "mcp_jira_get_issue"}}
	none := Definition{Tools: []string{}}
	mcp := Definition{Tools: []string{"mcp_*"}}
	for _, tc := range []struct {
		def                Definition
		server, tool, name string
		want               bool
	}{
		{all, "", "", "run_shell_command", true},
		{all, "github", "list", "list", true},
		{some, "", "", "read_file", true},
		{some, "", "", "grep_search", true},
		{some, "", "", "write_file", false},
		{some, "github", "list_issues", "list_issues", true},
		{some, "jira", "get_issue", "get_issue", true},
		{some, "jira", "create_issue", "create_issue", false},
		{some, "", "", "mcp_github_x", false}, // not an MCP tool: the MCP patterns do not match names
		{none, "", "", "read_file", false},
		{mcp, "any", "thing", "thing", true},
		{mcp, "", "", "read_file", false},
	} {
		var got bool
		if tc.server == "" {
			got = tc.def.AllowsTool(tc.name)
		} else {
			got = tc.def.AllowsMCPTool(tc.server, tc.tool, tc.name)
		}
		if got != tc.want {
			t.Errorf("%v allows %s/%s (%s): %v, want %v", tc.def.Tools, tc.server, tc.tool, tc.name, got, tc.want)
		}
	}
}

func TestAuthHeaders(t *testing.T) {
	env := map[string]string{"TOK": "s3cret", "PW": "pw"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		auth    Auth
		want    map[string]string
		wantErr string
	}{
		{Auth{Type: "apiKey", Key: "k"}, map[string]string{"X-API-Key": "k"}, ""},
		{Auth{Type: "apiKey", Key: "$TOK", Name: "X-Key"}, map[string]string{"X-Key": "s3cret"}, ""},
		{Auth{Type: "http", Scheme: "Bearer", Token: "${TOK}"}, map[string]string{"Authorization": "Bearer s3cret"}, ""},
		{Auth{Type: "http", Scheme: "Basic", Username: "u", Password: "$PW"}, map[string]string{"Authorization": "Basic dTpwdw=="}, ""},
		{Auth{Type: "http", Scheme: "Bearer", Token: "$MISSING"}, nil, "auth.token: environment variable MISSING is not set"},
		{Auth{Type: "http", Scheme: "Bearer", Token: "lit$eral"}, map[string]string{"Authorization": "Bearer lit$eral"}, ""},
	} {
		got, err := tc.auth.Headers(lookup)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%+v: error %v, want %q", tc.auth, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.auth, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.auth, diff)
		}
	}
	var none *Auth
	if h, err := none.Headers(nil); h != nil || err != nil {
		t.Errorf("no auth: %v %v", h, err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func agent(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nPrompt of " + name + ".\n"
}

// TestLoad: a trusted workspace's definitions come first and win over the
// user's; .agentry before .gemini; files in name order; "_" files,
// non-Markdown files and directories are skipped; a bad file is an error
// and the rest still load.
func TestLoad(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".agentry", "agents", "b.md"), agent("shared", "project's"))
	write(t, filepath.Join(ws, ".agentry", "agents", "a.md"), agent("alpha", "a"))
	write(t, filepath.Join(ws, ".gemini", "agents", "g.md"), agent("gem", "g"))
	write(t, filepath.Join(ws, ".gemini", "agents", "dup.md"), agent("alpha", "shadowed"))
	write(t, filepath.Join(home, ".agentry", "agents", "shared.md"), agent("shared", "user's"))
	write(t, filepath.Join(home, ".agentry", "agents", "_draft.md"), agent("draft", "d"))
	write(t, filepath.Join(home, ".agentry", "agents", "notes.txt"), "not an agent")
	write(t, filepath.Join(home, ".agentry", "agents", "dir.md", "x.md"), agent("nested", "n"))
	write(t, filepath.Join(home, ".agentry", "agents", "bad.md"), "---\nname: bad\n---\n")
	write(t, filepath.Join(home, ".gemini", "agents", "user.md"), agent("user-only", "u"))

	defs, errs := Load(LoadConfig{Workspace: ws, Home: home, Trusted: true})
	var got []string
	for _, d := range defs {
		got = append(got, d.Name+"="+d.Description+"@"+string(d.Scope)+":"+filepath.Base(d.File))
	}
	want := []string{"alpha=a@project:a.md", "shared=project's@project:b.md", "gem=g@project:g.md", "user-only=u@user:user.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("definitions (-want +got):\n%s", diff)
	}
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, strings.ReplaceAll(strings.ReplaceAll(err.Error(), ws, "WS"), home, "HOME"))
	}
	wantErrs := []string{
		`duplicate agent name: agent definition WS/.gemini/agents/dup.md: "alpha" is already defined in WS/.agentry/agents/a.md, which wins`,
		`agent definition HOME/.agentry/agents/bad.md:2: description: missing or empty: the parent's model chooses agents by their description`,
		`duplicate agent name: agent definition HOME/.agentry/agents/shared.md: "shared" is already defined in WS/.agentry/agents/b.md, which wins`,
	}
	if diff := cmp.Diff(wantErrs, msgs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if !errors.Is(errs[0], ErrDuplicate) {
		t.Errorf("a duplicate is not ErrDuplicate: %v", errs[0])
	}
}

// TestLoadUntrusted: an untrusted workspace's definitions are not read,
// and the error says how to use them.
func TestLoadUntrusted(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".gemini", "agents", "evil.md"), agent("evil", "runs everything"))
	write(t, filepath.Join(home, ".agentry", "agents", "mine.md"), agent("mine", "m"))
	defs, errs := Load(LoadConfig{Workspace: ws, Home: home})
	if len(defs) != 1 || defs[0].Name != "mine" {
		t.Errorf("definitions %+v, want only the user's", defs)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrUntrusted) ||
		errs[0].Error() != "workspace not trusted: the agent definitions in "+filepath.Join(ws, ".gemini", "agents")+" are not loaded; trust the workspace (--trust-workspace) to use them" {
		t.Errorf("errors %v", errs)
	}
	// No definitions, no notice.
	if _, errs := Load(LoadConfig{Workspace: t.TempDir(), Home: home}); len(errs) != 0 {
		t.Errorf("errors without workspace definitions: %v", errs)
	}
}

func TestReadFileTooLarge(t *testing.T) {
	file := filepath.Join(t.TempDir(), "big.md")
	write(t, file, agent("big", "b")+strings.Repeat("x", maxFileSize))
	if _, err := ReadFile(file); err == nil || !strings.HasSuffix(err.Error(), "larger than 1 MiB") {
		t.Errorf("error %v", err)
	}
}
