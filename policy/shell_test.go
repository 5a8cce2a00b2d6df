package policy

import (
	"slices"
	"testing"
)

// The shell table: the decision for a run_shell_command call under the
// bundled defaults, interactive, in a trusted workspace, in default,
// autoEdit and yolo mode; with user rules allowing the prefixes git and
// "npm test", echo (allowRedirection) and denying rm (default mode); and in
// an untrusted workspace (default mode). The same calls are replayed
// against gemini-cli's own engine in golden.json.
func TestShellTable(t *testing.T) {
	base := Defaults()
	prefixRules, errs := Parse([]byte(`
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git", "npm test"]
decision = "allow"
priority = 100
[[rule]]
toolName = "run_shell_command"
commandPrefix = "echo"
decision = "allow"
priority = 100
allowRedirection = true
[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm"
decision = "deny"
priority = 100
denyMessage = "no rm"
`), TierUser, "user.toml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	plain, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	withPrefix, err := New(slices.Concat(base, prefixRules))
	if err != nil {
		t.Fatal(err)
	}
	const ws = "/nonexistent/agentry-policy-ws"
	tests := []struct {
		command                                string
		def, autoEdit, yolo, prefix, untrusted Decision
	}{
		{"ls -la", Allow, Allow, Allow, Allow, Allow},
		{"ls -la && rm x", AskUser, AskUser, Allow, Deny, AskUser},
		{"cat foo.txt", Allow, Allow, Allow, Allow, Allow},
		{"cat /etc/passwd", AskUser, AskUser, Allow, AskUser, AskUser},
		{"cat ../outside.txt", AskUser, AskUser, Allow, AskUser, AskUser},
		{"echo hi > out.txt", AskUser, AskUser, Allow, Allow, AskUser},
		{"echo hi >> out.txt", AskUser, AskUser, Allow, Allow, AskUser},
		{"cat < in.txt", AskUser, AskUser, Allow, AskUser, AskUser},
		{"cat <<EOF\nhi\nEOF", AskUser, AskUser, Allow, AskUser, AskUser},
		{"grep foo <<< \"bar\"", AskUser, Allow, Allow, AskUser, AskUser},
		{"rm -rf build", AskUser, AskUser, Allow, Deny, AskUser},
		{"rm -f x", AskUser, AskUser, Allow, Deny, AskUser},
		{"rm x", AskUser, AskUser, Allow, Deny, AskUser},
		{"sudo rm -rf /", AskUser, AskUser, Allow, AskUser, AskUser},
		{"find . -name '*.go'", Allow, Allow, Allow, Allow, Allow},
		{"find . -delete", AskUser, AskUser, Allow, AskUser, AskUser},
		{"find . -exec rm {} \\;", AskUser, AskUser, Allow, AskUser, AskUser},
		{"rg --pre cat foo", AskUser, AskUser, Allow, AskUser, AskUser},
		{"rg foo", AskUser, AskUser, Allow, AskUser, AskUser},
		{"git status", Allow, Allow, Allow, Allow, AskUser},
		{"git log --oneline", Allow, Allow, Allow, Allow, AskUser},
		{"git diff --output=x", AskUser, AskUser, Allow, Allow, AskUser},
		{"git -c core.pager=x log", AskUser, AskUser, Allow, Allow, AskUser},
		{"git push", AskUser, AskUser, Allow, Allow, AskUser},
		{"git branch", Allow, Allow, Allow, Allow, AskUser},
		{"git branch -D main", AskUser, AskUser, Allow, Allow, AskUser},
		{"sed -n 10p file", Allow, Allow, Allow, Allow, Allow},
		{"sed -i s/a/b/ file", AskUser, AskUser, Allow, AskUser, AskUser},
		{"base64 file", Allow, Allow, Allow, Allow, Allow},
		{"base64 -o out file", AskUser, AskUser, Allow, AskUser, AskUser},
		{"bash -c \"ls -la\"", AskUser, AskUser, Allow, AskUser, AskUser},
		{"bash -c 'rm -rf x'", AskUser, AskUser, Allow, Deny, AskUser},
		{"echo $(rm -rf x)", AskUser, AskUser, Allow, Deny, AskUser},
		{"(cd sub && ls)", AskUser, AskUser, Allow, AskUser, AskUser},
		{"ls | wc -l", AskUser, AskUser, Allow, AskUser, AskUser},
		{"ls 2>&1", AskUser, AskUser, Allow, AskUser, AskUser},
		{"npm test", AskUser, AskUser, Allow, Allow, AskUser},
		{"npm test && git push", AskUser, AskUser, Allow, Allow, AskUser},
		{"npm testing", AskUser, AskUser, Allow, AskUser, AskUser},
		{"cd /tmp", AskUser, AskUser, Allow, AskUser, AskUser},
		{"echo \"unterminated", AskUser, AskUser, Allow, AskUser, AskUser},
		{"echo ${x@P}", AskUser, AskUser, Allow, AskUser, AskUser},
		{"ln -s a b", AskUser, AskUser, Allow, AskUser, AskUser},
		{"which go", Allow, Allow, Allow, Allow, Allow},
		{"git status > log.txt", AskUser, AskUser, Allow, AskUser, AskUser},
	}
	for _, tc := range tests {
		call := func(m Mode, trusted bool) Call {
			return Call{Tool: "run_shell_command", Args: map[string]any{"command": tc.command}, Mode: m, Interactive: true, Trusted: trusted, Workspace: ws}
		}
		for _, c := range []struct {
			name string
			e    *Engine
			call Call
			want Decision
		}{
			{"default", plain, call(ModeDefault, true), tc.def},
			{"autoEdit", plain, call(ModeAutoEdit, true), tc.autoEdit},
			{"yolo", plain, call(ModeYolo, true), tc.yolo},
			{"prefix rules", withPrefix, call(ModeDefault, true), tc.prefix},
			{"untrusted", plain, call(ModeDefault, false), tc.untrusted},
		} {
			if got := c.e.Check(c.call).Decision; got != c.want {
				t.Errorf("%q %s: %s, want %s", tc.command, c.name, got, c.want)
			}
		}
	}
	// A deny rule's message comes back with the decision, from the
	// sub-command that was denied.
	r := withPrefix.Check(Call{Tool: "run_shell_command", Args: map[string]any{"command": "ls && rm x"}, Mode: ModeDefault, Interactive: true, Trusted: true})
	if r.Decision != Deny || r.DenyMessage != "no rm" {
		t.Errorf("ls && rm x: %+v", r)
	}
}

func TestParseCommandDetails(t *testing.T) {
	type d struct {
		name, text string
	}
	tests := []struct {
		command string
		want    []d
		err     bool
	}{
		{"ls -la", []d{{"ls", "ls -la"}}, false},
		{"ls && rm x | wc", []d{{"ls", "ls"}, {"rm", "rm x"}, {"wc", "wc"}}, false},
		{"echo $(rm -rf x) > f", []d{{"echo", "echo $(rm -rf x)"}, {nameCmdSubst, "$(rm -rf x)"}, {"rm", "rm -rf x"}, {nameRedirOut, "> f"}}, false},
		{"FOO=1 git status", []d{{"git", "FOO=1 git status"}}, false},
		{`"ls" x`, []d{{"ls", `"ls" x`}}, false},
		{"export A=1", []d{{"export", "export A=1"}}, false},
		{"(cd x)", []d{{nameSubshell, "(cd x)"}, {"cd", "cd x"}}, false},
		{"grep a <<< b", []d{{"grep", "grep a <<< b"}, {nameHerestring, "<<< b"}}, false},
		{"cat <(ls)", []d{{"cat", "cat <(ls)"}, {nameProcSubst, "<(ls)"}, {"ls", "ls"}}, false},
		{"echo `id`", []d{{"echo", "echo `id`"}, {nameCmdSubst, "`id`"}, {"id", "id"}}, false},
		{"A=1", nil, true},
		{"echo 'x", nil, true},
		{"echo ${x@P}", []d{{"echo", "echo ${x@P}"}}, true},
		{"   ", nil, true},
	}
	for _, tc := range tests {
		p := parseCommandDetails(tc.command, nil)
		var got []d
		if !p.hasError || tc.want != nil {
			for _, x := range p.details {
				got = append(got, d{x.name, x.text})
			}
		}
		if p.hasError != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v err=%v, want %v err=%v", tc.command, got, p.hasError, tc.want, tc.err)
		}
	}
}

func TestStripShellWrapper(t *testing.T) {
	for in, want := range map[string]string{
		`bash -c "ls -la"`:                      "ls -la",
		`/bin/sh -c 'rm -rf x'`:                 "rm -rf x",
		`zsh -c "echo \"hi\" $HOME"`:            `echo "hi" $HOME`,
		`BASH -C ls`:                            "ls",
		`bash -lc "ls"`:                         `bash -lc "ls"`,
		`pwsh -NoProfile -Command 'Get-Item x'`: "Get-Item x",
		"  ls  ":                                "ls",
	} {
		if got := stripShellWrapper(in); got != want {
			t.Errorf("stripShellWrapper(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShellArgs(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{`ls -la && rm "a b" 'c d'`, []string{"ls", "-la", "&&", "rm", "a b", "c d"}, false},
		{`FOO=$HOME git status`, []string{"FOO=", "git", "status"}, false},
		{`echo a#b c`, []string{"echo", "a", ""}, false},
		{`find . -name *.go`, []string{"find", ".", "-name", "*.go"}, false},
		{`echo "\$x \"q\""`, []string{"echo", `$x "q"`}, false},
		{`ls>f 2>&1`, []string{"ls", ">", "f", "2", ">&", "1"}, false},
		{`echo ${}`, nil, true},
	}
	for _, tc := range tests {
		got, err := shellArgs(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("shellArgs(%q) = %q, %v; want %q err=%v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestHasRedirection(t *testing.T) {
	for in, want := range map[string]bool{
		"ls":             false,
		"ls > f":         true,
		"ls 2>&1":        true,
		"cat < f":        true,
		"cat <<EOF\nEOF": true,
		"grep a <<< b":   true,
		"cat <(ls)":      false,
		"[[ a > b ]]":    false,
		"echo '>'":       false,
		"echo 'x":        false,
	} {
		if got := hasRedirection(in, nil); got != want {
			t.Errorf("hasRedirection(%q) = %v, want %v", in, got, want)
		}
	}
	if !hasRedirection("echo 'x > y", nil) {
		t.Error("an unparsable line holding > counts as redirecting")
	}
}

func TestCommandPrefixPattern(t *testing.T) {
	for prefix, want := range map[string]string{
		"git":      `\"command\":\"git(?:[\s"]|\\")`,
		"npm test": `\"command\":\"npm\ test(?:[\s"]|\\")`,
		`say "hi"`: `\"command\":\"say\ \\\"hi\\\"(?:[\s"]|\\")`,
	} {
		if got := CommandPrefixPattern(prefix); got != want {
			t.Errorf("CommandPrefixPattern(%q) = %s, want %s", prefix, got, want)
		}
	}
	re, err := CompileJSRegexp(CommandPrefixPattern("git"))
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]bool{"git status": true, "git": true, "gitx": false, "git\tlog": false, `git "x"`: true} {
		if got := re.MatchString(StableJSON(map[string]any{"command": cmd})); got != want {
			t.Errorf("git prefix on %q: %v, want %v", cmd, got, want)
		}
	}
}
