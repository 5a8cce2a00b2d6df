package commands

import (
	"errors"
	"maps"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
)

// TestParsePromptArgs pins gemini-cli's McpPromptLoader.parseArgs.
func TestParsePromptArgs(t *testing.T) {
	two := []runtime.PromptArgument{{Name: "city", Required: true}, {Name: "state", Required: true}}
	one := []runtime.PromptArgument{{Name: "city", Required: true}, {Name: "state"}}
	for _, tc := range []struct {
		name  string
		input string
		args  []runtime.PromptArgument
		want  map[string]string
		err   string
	}{
		{"named", `--city=Paris --state=IDF`, two, map[string]string{"city": "Paris", "state": "IDF"}, ""},
		{"named quoted with escapes", `--city="New \"York\"" --state=NY`, two, map[string]string{"city": `New "York"`, "state": "NY"}, ""},
		{"positional in declared order", `Paris IDF`, two, map[string]string{"city": "Paris", "state": "IDF"}, ""},
		{"positional quoted", `"San Francisco" CA`, two, map[string]string{"city": "San Francisco", "state": "CA"}, ""},
		{"named and positional mixed", `--state=CA "San Francisco"`, two, map[string]string{"city": "San Francisco", "state": "CA"}, ""},
		{"one required left takes every word", `New York City`, one, map[string]string{"city": "New York City"}, ""},
		{"optional only by name", `Rome --state=Lazio`, one, map[string]string{"city": "Rome", "state": "Lazio"}, ""},
		{"one required left and no words is empty", ``, one, map[string]string{"city": ""}, ""},
		{"missing required", `Paris`, two, nil, "Missing required argument(s): --state"},
		{"missing every required", ``, two, nil, "Missing required argument(s): --city, --state"},
		{"unknown named ignored", `--zip=75001 Paris IDF`, two, map[string]string{"city": "Paris", "state": "IDF"}, ""},
		{"no arguments declared", `whatever --x=1`, nil, map[string]string{}, ""},
		{"empty named value does not count", `--city="" Lyon IDF`, two, map[string]string{"city": "Lyon", "state": "IDF"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePromptArgs(tc.input, tc.args)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || !errors.Is(err, ErrMissingArguments) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPromptCommandNames pins gemini-cli's SlashCommandResolver for
// prompts: a prompt colliding with a built-in command is renamed
// <server>.<name>; two prompts of one name are both renamed; a renamed
// name already taken gets a number.
func TestPromptCommandNames(t *testing.T) {
	r := &Registry{cfg: Config{Reserved: []string{"help", "quit", "exit"}}, cmds: []Command{{Name: "model"}, {Name: "compress", Aliases: []string{"compact"}}}}
	prompts := []runtime.PromptInfo{
		{Server: "a", Name: "simple prompt"},
		{Server: "a", Name: "model"},
		{Server: "a", Name: "exit"},
		{Server: "a", Name: "dup"},
		{Server: "b", Name: "dup"},
		{Server: "c", Name: "dup"},
		{Server: "b", Name: "a.dup"},
		{Server: "b", Name: "compact"},
		{Server: "b", Name: "/bad"},
		{Server: "b", Name: "bad\x1b[31m"},
	}
	var got []string
	for _, c := range r.promptCommands(prompts) {
		got = append(got, c.MCPServer+":"+c.Name)
	}
	want := []string{"a:simple-prompt", "a:a.model", "a:a.exit", "a:a.dup", "b:b.dup", "c:c.dup", "b:b.a.dup", "b:b.compact"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
