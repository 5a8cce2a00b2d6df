package commands_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/runtime"
)

// promptTarget is a conversation with MCP prompts.
type promptTarget struct {
	fakeTarget
	prompts []runtime.PromptInfo
	got     []string // server/name?args of each GetPrompt
}

func (p *promptTarget) Prompts(context.Context) ([]runtime.PromptInfo, error) {
	return p.prompts, errors.New(`mcp server "down": connecting: refused`)
}

func (p *promptTarget) GetPrompt(_ context.Context, server, name string, args map[string]string) ([]runtime.ContentPart, error) {
	p.got = append(p.got, server+"/"+name+"?city="+args["city"]+"&state="+args["state"])
	if name == "broken" {
		return nil, errors.New("the server failed")
	}
	return []runtime.ContentPart{runtime.TextPart("weather in " + args["city"]), {Type: runtime.PartMedia, Data: "cG5n", MimeType: "image/png"}}, nil
}

func newPromptTarget() *promptTarget {
	return &promptTarget{prompts: []runtime.PromptInfo{
		{Server: "everything", Name: "args-prompt", Description: "A prompt with two arguments", Arguments: []runtime.PromptArgument{
			{Name: "city", Description: "Name of the city", Required: true}, {Name: "state", Description: "Name of the state"}}},
		{Server: "everything", Name: "simple-prompt"},
		{Server: "everything", Name: "model"},
		{Server: "everything", Name: "broken"},
	}}
}

func TestPromptCommands(t *testing.T) {
	base := newRegistry(t, commands.Config{})
	tgt := newPromptTarget()
	r := base.For(t.Context(), tgt)

	// Listed after the built-in commands, renamed on a collision, with
	// their arguments and help subcommand; the base registry is unchanged.
	var names []string
	for _, c := range r.Commands() {
		if c.MCPServer != "" {
			names = append(names, c.Name)
		}
	}
	if got := strings.Join(names, " "); got != "args-prompt simple-prompt everything.model broken" {
		t.Fatalf("prompt commands = %q", got)
	}
	if len(base.Commands()) != len(r.Commands())-4 {
		t.Errorf("For changed the base registry")
	}
	c, err := r.Lookup([]string{"args-prompt"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Description != "A prompt with two arguments" || len(c.Arguments) != 2 || !c.Arguments[0].Required || c.SubCommands[0].Name != "help" {
		t.Errorf("args-prompt = %+v", c)
	}
	if c, _ := r.Lookup([]string{"simple-prompt"}); c.Description != "Invoke prompt simple-prompt" {
		t.Errorf("a prompt without description: %q", c.Description)
	}

	run := func(line string) (string, error) {
		path, args, ok := r.Parse(line)
		if !ok {
			t.Fatalf("%q is not a command", line)
		}
		var out []string
		err := r.Run(t.Context(), tgt, path, args, func(s string) { out = append(out, s) })
		return strings.Join(out, "\n"), err
	}

	_, err = run(`/args-prompt --state=CA "San Francisco"`)
	var sub *commands.Submission
	if !errors.As(err, &sub) {
		t.Fatalf("running a prompt: err = %v, want a Submission", err)
	}
	if m := sub.Message; len(m.Content) != 2 || m.Content[0].Text != "weather in San Francisco" || m.Content[1].MimeType != "image/png" ||
		m.DisplayContent != `/args-prompt --state=CA "San Francisco"` {
		t.Errorf("submission = %+v", m)
	}
	if got := tgt.got[0]; got != "everything/args-prompt?city=San Francisco&state=CA" {
		t.Errorf("GetPrompt = %q", got)
	}
	if _, err := run("/everything.model"); !errors.As(err, &sub) || tgt.got[1] != "everything/model?city=&state=" {
		t.Errorf("the renamed prompt: err = %v, calls %q", err, tgt.got)
	}
	if _, err := run("/broken"); err == nil || err.Error() != "Error: the server failed" {
		t.Errorf("a failing prompt: err = %v", err)
	}

	help, err := run("/args-prompt help")
	if err != nil {
		t.Fatal(err)
	}
	want := `Arguments for "args-prompt":

You can provide arguments by name (e.g., --argName="value") or by position.

e.g., args-prompt "foo","foo" is equivalent to args-prompt --city="foo",--state="foo"

  --city
    Name of the city
    (required: yes)

  --state
    Name of the state
    (required: no)`
	if help != want {
		t.Errorf("help =\n%s\nwant\n%s", help, want)
	}
	if help, _ := run("/simple-prompt help"); help != `Prompt "simple-prompt" has no arguments.` {
		t.Errorf("help of a prompt without arguments = %q", help)
	}

	// Without a conversation that offers prompts, there are none.
	if r := base.For(t.Context(), &fakeTarget{}); len(r.Commands()) != len(base.Commands()) {
		t.Error("For added commands for a target without prompts")
	}
	if _, err := r.Lookup([]string{"args-prompt"}); err != nil {
		t.Error(err)
	}
	if err := r.Run(t.Context(), nil, []string{"args-prompt"}, "x", nil); !errors.Is(err, commands.ErrNoTarget) {
		t.Errorf("a prompt without a conversation: err = %v", err)
	}
}

func TestPromptCommandMissingArguments(t *testing.T) {
	tgt := &promptTarget{prompts: []runtime.PromptInfo{{Server: "s", Name: "two", Arguments: []runtime.PromptArgument{
		{Name: "city", Required: true}, {Name: "state", Required: true}}}}}
	r := newRegistry(t, commands.Config{}).For(t.Context(), tgt)
	err := r.Run(t.Context(), tgt, []string{"two"}, "Paris", nil)
	if err == nil || err.Error() != "Missing required argument(s): --state" {
		t.Errorf("err = %v", err)
	}
	if len(tgt.got) != 0 {
		t.Errorf("the prompt was asked for: %q", tgt.got)
	}
}
