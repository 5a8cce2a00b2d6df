package commands

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/agentry-dev/agentry/runtime"
)

// Prompter is implemented by a Target that offers MCP prompts
// (*runtime.Session): Registry.For makes each prompt a command.
type Prompter interface {
	// Prompts lists the conversation's MCP prompts; an error names the
	// servers that could not be listed, whose prompts are left out.
	Prompts(ctx context.Context) ([]runtime.PromptInfo, error)
	// GetPrompt gets a prompt's content with its arguments.
	GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]runtime.ContentPart, error)
}

var _ Prompter = (*runtime.Session)(nil)

// Submission is what Run returns, as its error, for a command whose result
// is the user's next turn (an MCP prompt's messages; gemini-cli's
// submit_prompt): the driver sends Message to the model as if the user
// had typed it. A driver that does not handle it shows it as the error it
// also is, rather than dropping the prompt.
type Submission struct {
	// Message is the turn to send; its DisplayContent is what the user
	// typed.
	Message *runtime.SendMessage
}

// Error says what the driver should have done.
func (s *Submission) Error() string {
	return "the command's result is a prompt to send to the model as the user's turn"
}

// For returns a registry with the commands of r and, when t offers MCP
// prompts, a command for each of t's prompts, after the others (in help,
// completion and commands/get). A prompt's command is its name with runs
// of white space as "-"; when that name is taken, by another command (a
// name, an alias or Config.Reserved) or by another server's prompt, it is
// "<server>.<name>" (then a number if that is taken too), and a prompt
// that took the name first is renamed the same way: gemini-cli's
// SlashCommandResolver. Listing errors leave the failing servers' prompts
// out. r itself does not change; For is cheap when the prompts are kept
// by the MCP manager, so a driver may call it for every line.
func (r *Registry) For(ctx context.Context, t Target) *Registry {
	p, ok := t.(Prompter)
	if !ok || p == nil {
		return r
	}
	prompts, _ := p.Prompts(ctx)
	if len(prompts) == 0 {
		return r
	}
	out := &Registry{cfg: r.cfg, cmds: slices.Clip(r.cmds)}
	out.cmds = append(out.cmds, r.promptCommands(prompts)...)
	return out
}

// promptCommands names and builds the prompts' commands.
func (r *Registry) promptCommands(prompts []runtime.PromptInfo) []Command {
	builtin := map[string]bool{}
	for _, n := range r.cfg.Reserved {
		builtin[n] = true
	}
	for _, c := range r.cmds {
		for _, n := range c.names() {
			builtin[n] = true
		}
	}
	// taken maps a final name to the prompt holding it (-1: a built-in).
	taken := map[string]int{}
	for n := range builtin {
		taken[n] = -1
	}
	claimed := map[string]bool{} // names a prompt asked for first
	names := make([]string, len(prompts))
	rename := func(i int) string {
		base := prompts[i].Server + "." + commandName(prompts[i].Name)
		name := base
		for n := 1; ; n++ {
			if _, ok := taken[name]; !ok {
				return name
			}
			name = fmt.Sprintf("%s%d", base, n)
		}
	}
	for i, p := range prompts {
		name := commandName(p.Name)
		if name == "" || strings.HasPrefix(name, "/") || strings.IndexFunc(name, unicode.IsControl) >= 0 {
			continue // not a name one can type
		}
		if _, held := taken[name]; held || claimed[name] {
			// A name held by a renamed prompt is kept by it (gemini-cli
			// overwrites that command; agentry keeps both).
			if owner, ok := taken[name]; ok && owner >= 0 && commandName(prompts[owner].Name) == name {
				// The first prompt to claim the name gives it up too.
				delete(taken, name)
				names[owner] = rename(owner)
				taken[names[owner]] = owner
			}
			names[i] = rename(i)
		} else {
			claimed[name] = true
			names[i] = name
		}
		taken[names[i]] = i
	}
	var cmds []Command
	for i, p := range prompts {
		if names[i] == "" {
			continue
		}
		cmds = append(cmds, promptCommand(names[i], p))
	}
	return cmds
}

// commandName is gemini-cli's command name of a prompt: trimmed, runs of
// white space as "-".
func commandName(prompt string) string { return strings.Join(strings.Fields(prompt), "-") }

// promptCommand is the command of one MCP prompt: running it gets the
// prompt with the arguments given (gemini-cli's syntax, parsePromptArgs)
// and returns its content as a Submission; its help subcommand lists the
// arguments.
func promptCommand(name string, p runtime.PromptInfo) Command {
	desc := p.Description
	if desc == "" {
		desc = "Invoke prompt " + p.Name
	}
	c := Command{Name: name, Description: desc, MCPServer: p.Server, NeedsTarget: true}
	for _, a := range p.Arguments {
		c.Arguments = append(c.Arguments, Argument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	c.SubCommands = []Command{{
		Name: "help", Description: "Show help for this prompt",
		Run: func(_ context.Context, _ Target, _ string, out func(string)) error {
			out(promptHelp(p))
			return nil
		},
	}}
	c.Run = func(ctx context.Context, t Target, args string, _ func(string)) error {
		pr, ok := t.(Prompter)
		if !ok {
			return fmt.Errorf("/%s: the conversation has no MCP prompts", name)
		}
		values, err := parsePromptArgs(args, p.Arguments)
		if err != nil {
			return err
		}
		parts, err := pr.GetPrompt(ctx, p.Server, p.Name, values)
		if err != nil {
			return fmt.Errorf("Error: %w", err)
		}
		display := "/" + name
		if args != "" {
			display += " " + args
		}
		return &Submission{Message: &runtime.SendMessage{Content: parts, DisplayContent: display}}
	}
	return c
}

// promptHelp is gemini-cli's text of "/<prompt> help".
func promptHelp(p runtime.PromptInfo) string {
	if len(p.Arguments) == 0 {
		return fmt.Sprintf("Prompt %q has no arguments.", p.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Arguments for %q:\n\n", p.Name)
	b.WriteString("You can provide arguments by name (e.g., --argName=\"value\") or by position.\n\n")
	pos := make([]string, len(p.Arguments))
	named := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		pos[i] = `"foo"`
		named[i] = fmt.Sprintf(`--%s="foo"`, a.Name)
	}
	// JavaScript's array-to-string joins with commas.
	fmt.Fprintf(&b, "e.g., %s %s is equivalent to %s %s\n\n", p.Name, strings.Join(pos, ","), p.Name, strings.Join(named, ","))
	for _, a := range p.Arguments {
		fmt.Fprintf(&b, "  --%s\n", a.Name)
		if a.Description != "" {
			fmt.Fprintf(&b, "    %s\n", a.Description)
		}
		req := "no"
		if a.Required {
			req = "yes"
		}
		fmt.Fprintf(&b, "    (required: %s)\n\n", req)
	}
	return strings.TrimRight(b.String(), "\n")
}

// ErrMissingArguments reports a prompt run without a required argument.
var ErrMissingArguments = errors.New("Missing required argument(s)")

var (
	namedArg      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`--([^=]+)=(?:"((?:\\.|[^"\\])*)"|([^ ]+))`) })
	positionalArg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:"((?:\\.|[^"\\])*)"|([^ ]+))`) })
	escaped       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\(.)`) })
)

// parsePromptArgs reads a prompt command's arguments as gemini-cli's
// McpPromptLoader.parseArgs does: --name=value and --name="quoted value"
// are named (backslash escapes a character); the rest, words or quoted
// strings, are positional and fill the required arguments not named, in
// the prompt's order — all of them joined by spaces when one required
// argument is left. Optional arguments are only given by name. A
// required argument left without a value is an error naming it.
func parsePromptArgs(input string, args []runtime.PromptArgument) (map[string]string, error) {
	named := map[string]string{}
	var positional strings.Builder
	last := 0
	for _, m := range namedArg().FindAllStringSubmatchIndex(input, -1) {
		v := ""
		if m[4] >= 0 {
			v = input[m[4]:m[5]]
		} else {
			v = input[m[6]:m[7]]
		}
		named[input[m[2]:m[3]]] = escaped().ReplaceAllString(v, "$1")
		positional.WriteString(input[last:m[0]])
		last = m[1]
	}
	positional.WriteString(input[last:])
	var words []string
	rest := strings.TrimSpace(positional.String())
	for _, m := range positionalArg().FindAllStringSubmatchIndex(rest, -1) {
		w := ""
		if m[2] >= 0 {
			w = rest[m[2]:m[3]]
		} else {
			w = rest[m[4]:m[5]]
		}
		words = append(words, escaped().ReplaceAllString(w, "$1"))
	}
	values := map[string]string{}
	for _, a := range args {
		if v := named[a.Name]; v != "" {
			values[a.Name] = v
		}
	}
	var unfilled []string
	for _, a := range args {
		if a.Required && values[a.Name] == "" {
			unfilled = append(unfilled, a.Name)
		}
	}
	if len(unfilled) == 1 {
		values[unfilled[0]] = strings.Join(words, " ")
		return values, nil
	}
	var missing []string
	for i, n := range unfilled {
		if i < len(words) {
			values[n] = words[i]
		} else {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrMissingArguments, strings.Join(missing, ", "))
	}
	return values, nil
}
