package attach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/internal/devclient"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// Commands lists the server's slash commands (commands/get), for /help,
// completion and ParseCommand: the server's own and the MCP prompts of
// this session's context.
func (s *Session) Commands(ctx context.Context) ([]devtool.SlashCommand, error) {
	var resp devtool.GetAllSlashCommandsResponse
	if err := s.conn.Call(ctx, "commands/get", map[string]string{"context_id": s.ID()}, &resp); err != nil {
		return nil, fmt.Errorf("attach: list the commands: %w", err)
	}
	return resp.Commands, nil
}

// Run runs a slash command on the server (command/execute) for this
// session's context and writes its output with out: tui.Config's
// RunCommand. The server answers with the execution's status, then the
// command's output as updates, to the final one; a command that cannot
// start fails with the server's reason. A command that starts a turn (an
// MCP prompt) ends when the turn's task appears: the turn is announced on
// Turns as others' are.
func (s *Session) Run(ctx context.Context, path []string, args string, out func(string)) error {
	if out == nil {
		out = func(string) {}
	}
	req := devtool.ExecuteSlashCommandRequest{CommandPath: path, Args: args, ContextID: s.ID()}
	name := "/" + strings.Join(path, " ")
	for f, err := range s.conn.Stream(ctx, "command/execute", req) {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if f.Event == nil {
			var st devtool.ExecuteSlashCommandResponse
			if json.Unmarshal(f.Result, &st) != nil {
				continue
			}
			switch st.Status {
			case devtool.CommandStarted:
			case devtool.CommandFailedToStart:
				return errors.New(st.Message)
			default:
				msg := st.Message
				if msg == "" {
					msg = fmt.Sprintf("the server answered %s, which this terminal cannot follow", st.Status)
				}
				return fmt.Errorf("%s: %s", name, msg)
			}
			continue
		}
		if _, ok := f.Event.(*a2a.Task); ok {
			// The command started a turn on the context (an MCP prompt):
			// this session follows it as a turn of the session's.
			return nil
		}
		u, ok := f.Event.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			continue
		}
		dev, _ := devtool.EventFrom(u.Metadata)
		if m := u.Status.Message; m != nil && dev.Kind != devtool.KindStateChange {
			for _, p := range m.Parts {
				if t := p.Text(); t != "" {
					out(t)
				}
			}
		}
		switch u.Status.State {
		case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
			msg := dev.Error
			if msg == "" {
				msg = "the command " + devclient.StateName(u.Status.State)
			}
			return errors.New(msg)
		}
	}
	return nil
}

// ParseCommand reads a line of input as one of cmds, by gemini-cli's
// rule (commands.Registry.Parse's): a line is a command when, trimmed, it
// starts with "/" but not "//" or "/*"; the path is the command's name,
// then its subcommand's when the next word names one (or when the
// command has only subcommands); args is the rest. An unknown command
// parses (the server reports it).
func ParseCommand(cmds []devtool.SlashCommand, line string) (path []string, args string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") || strings.HasPrefix(line, "//") || strings.HasPrefix(line, "/*") {
		return nil, "", false
	}
	name, rest := cutWord(line[1:])
	if name == "" {
		return nil, "", true
	}
	path = []string{name}
	var c *devtool.SlashCommand
	for i := range cmds {
		if cmds[i].Name == name {
			c = &cmds[i]
			break
		}
	}
	if c == nil || len(c.SubCommands) == 0 {
		return path, rest, true
	}
	word, after := cutWord(rest)
	if word == "" {
		return path, rest, true
	}
	for _, sub := range c.SubCommands {
		if sub.Name == word {
			return append(path, word), after, true
		}
	}
	if len(c.Arguments) == 0 {
		// A command of subcommands only: the word is an unknown one,
		// which the server names.
		return append(path, word), after, true
	}
	return path, rest, true
}

// cutWord returns the first word of s and the rest, both trimmed.
func cutWord(s string) (word, rest string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}
