// Package complete is the interactive terminal's Tab completion: slash
// commands and their subcommands, and the paths of @path references, as
// gemini-cli's input box completes them (its useSlashCompletion, and the
// directory and recursive search of useCompletion before the fuzzy file
// index replaced it). Path completion reads the workspace through
// tools.Workspace and its ignore files, never leaves the workspace, and
// reads a bounded number of directory entries, so that a huge workspace
// cannot hang the terminal.
package complete

import (
	"slices"
	"strings"
)

// Suggestion is one completion.
type Suggestion struct {
	// Label is what the menu shows: a command's name, a path.
	Label string
	// Description is a command's description; empty for paths.
	Description string
	// Value is what the completion puts in: for a command the whole new
	// input, for a path the path escaped as the @path parser reads it.
	Value string
}

// Command is a slash command as completion sees it.
type Command struct {
	// Name is the command's name without its slash: "memory".
	Name string
	// AltNames are other names it answers to: "exit" for "quit".
	AltNames []string
	// Description is shown beside the name.
	Description string
	// Hidden commands run but are never suggested.
	Hidden bool
	// Args marks a command that takes arguments: completing it leaves a
	// space after it, as completing one with subcommands does.
	Args bool
	// SubCommands are completed after the command and a space.
	SubCommands []Command
}

// Commands completes the slash command line input: "/mem" gives
// "/memory " (it has subcommands, so a space follows), "/memory s" gives
// "/memory show", "/memory " every subcommand of /memory. Names match by
// prefix, ignoring case, and are ordered as gemini-cli orders them: an
// exact name, an exact other name, a name prefix, another name's prefix,
// then in the order given. Input that is not a command line ("//", "/*",
// no slash), a path through no known command, and a command's arguments
// give nothing.
func Commands(cmds []Command, input string) []Suggestion {
	if !strings.HasPrefix(input, "/") || strings.HasPrefix(input, "//") || strings.HasPrefix(input, "/*") {
		return nil
	}
	parts := strings.Fields(input[1:])
	var partial string
	if len(parts) > 0 && !strings.HasSuffix(input, " ") {
		partial = parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	level := cmds
	for _, p := range parts {
		i := slices.IndexFunc(level, func(c Command) bool { return c.matches(p) })
		if i < 0 {
			return nil
		}
		level = level[i].SubCommands
	}
	lower := strings.ToLower(partial)
	type ranked struct {
		cmd  Command
		rank int
	}
	var found []ranked
	for _, c := range level {
		if c.Hidden {
			continue
		}
		r := c.rank(lower)
		if r < 0 {
			continue
		}
		found = append(found, ranked{c, r})
	}
	slices.SortStableFunc(found, func(a, b ranked) int { return a.rank - b.rank })

	prefix := "/"
	if len(parts) > 0 {
		prefix += strings.Join(parts, " ") + " "
	}
	out := make([]Suggestion, 0, len(found))
	for _, f := range found {
		v := prefix + f.cmd.Name
		if f.cmd.Args || len(f.cmd.SubCommands) > 0 {
			v += " "
		}
		out = append(out, Suggestion{Label: f.cmd.Name, Description: f.cmd.Description, Value: v})
	}
	return out
}

// matches reports whether name names c, ignoring case.
func (c Command) matches(name string) bool {
	return strings.EqualFold(c.Name, name) || slices.ContainsFunc(c.AltNames, func(a string) bool { return strings.EqualFold(a, name) })
}

// rank places c for the lower-cased partial name: 0 an exact name, 1 an
// exact other name, 2 a name prefix, 3 another name's prefix, -1 no match.
func (c Command) rank(lower string) int {
	name := strings.ToLower(c.Name)
	switch {
	case name == lower:
		return 0
	case slices.ContainsFunc(c.AltNames, func(a string) bool { return strings.ToLower(a) == lower }):
		return 1
	case strings.HasPrefix(name, lower):
		return 2
	case slices.ContainsFunc(c.AltNames, func(a string) bool { return strings.HasPrefix(strings.ToLower(a), lower) }):
		return 3
	}
	return -1
}
