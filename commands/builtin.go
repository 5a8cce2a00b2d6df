package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentry-dev/agentry/compression"
	"github.com/agentry-dev/agentry/runstats"
	"github.com/agentry-dev/agentry/runtime"
)

// builtin returns the built-in commands, in help order: the A2A server's
// first, as it has always listed them, then the newer ones.
func (r *Registry) builtin() []Command {
	var cmds []Command
	if r.cfg.Memory != nil {
		cmds = append(cmds, Command{
			Name: "memory", Description: "Show or add to the memory (context files) the agent reads",
			SubCommands: []Command{
				{Name: "show", Description: "Show the memory a session in this workspace reads, and its files", Run: r.memoryShow},
				{Name: "add", Description: "Add a fact to your global memory file", Arguments: []Argument{
					{Name: "fact", Description: "The text to remember", Required: true}}, Run: r.memoryAdd},
				{Name: "refresh", Aliases: []string{"reload"}, Description: "Read the context files again for the conversation's next requests",
					NeedsTarget: true, Run: memoryRefresh},
			},
		})
	}
	return append(cmds,
		Command{
			Name: "model", Description: "Show the conversation's model, or switch it",
			Arguments:   []Argument{{Name: "name", Description: "The model to switch to (gemini-2.5-flash, flash, openai:<model> …)"}},
			NeedsTarget: true, Run: runModel,
		},
		Command{
			Name: "rewind", Description: "Remove a message and everything after it from the conversation",
			Arguments:   []Argument{{Name: "message_id", Description: "The transcript id of the first message to remove", Required: true}},
			NeedsTarget: true, Run: runRewind,
		},
		Command{
			Name: "tools", Description: "List the tools the agent can use", NeedsTarget: true,
			SubCommands: []Command{{Name: "list", Description: "List the conversation's tools with their descriptions", NeedsTarget: true, Run: runToolsList}},
		},
		Command{
			Name: "restore", Description: "List the file edits of the conversation, or undo one",
			Arguments:   []Argument{{Name: "tool_call_id", Description: "The edit to undo; without it, the edits are listed"}},
			NeedsTarget: true, Run: runRestore,
		},
		Command{
			Name: "stats", Aliases: []string{"usage"},
			Description: "Show the conversation's token usage by model and its tool calls since it was opened",
			NeedsTarget: true, Run: runStats,
		},
		Command{
			Name: "compress", Aliases: []string{"summarize", "compact"},
			Description: "Replace the conversation's history with a summary now",
			NeedsTarget: true, Run: runCompress,
		},
		Command{
			Name: "approval-mode", Description: "Show the approval mode of the conversation's tool calls, or change it",
			Arguments:   []Argument{{Name: "mode", Description: "plan (read-only tools), default (ask before changes), auto_edit (file edits run) or yolo (everything runs)"}},
			NeedsTarget: true, Run: runApprovalMode,
		},
		r.mcpCommand(),
		Command{
			Name: "agents", Description: "List the subagents the conversation can hand tasks to",
			NeedsTarget: true, Run: runAgents,
		},
	)
}

// noArgs refuses arguments to a command that takes none.
func noArgs(name, args string) error {
	if args != "" {
		return fmt.Errorf("/%s takes no arguments (got %q)", name, args)
	}
	return nil
}

func (r *Registry) memoryShow(ctx context.Context, t Target, _ string, out func(string)) error {
	ws := r.cfg.Workspace
	if t != nil {
		ws = t.Workspace()
	}
	text, files, err := r.cfg.Memory.Show(ctx, ws)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		out("Memory is empty: no context files were found.")
		return nil
	}
	out(fmt.Sprintf("Memory from %d file(s): %s\n\n%s", len(files), strings.Join(files, ", "), text))
	return nil
}

func (r *Registry) memoryAdd(ctx context.Context, t Target, args string, out func(string)) error {
	if args == "" {
		return errors.New("usage: /memory add <text to remember>")
	}
	file, err := r.cfg.Memory.Add(ctx, args)
	if err != nil {
		return err
	}
	// The conversations read it too, from their next request, as
	// gemini-cli refreshes its memory after adding to it.
	switch {
	case r.cfg.ReloadAll != nil:
		err = r.cfg.ReloadAll(ctx)
	case t != nil:
		err = t.ReloadMemory()
	}
	if err != nil {
		return fmt.Errorf("remembered %q in %s, but not every open conversation could read it again: %w", args, file, err)
	}
	out(fmt.Sprintf("Remembered %q in %s; every conversation reads it from its next request.", args, file))
	return nil
}

func memoryRefresh(_ context.Context, t Target, args string, out func(string)) error {
	if err := noArgs("memory refresh", args); err != nil {
		return err
	}
	if err := t.ReloadMemory(); err != nil {
		return err
	}
	out("Memory refreshed: the conversation reads the context files as they are now from its next request.")
	return nil
}

func runModel(ctx context.Context, t Target, args string, out func(string)) error {
	if args == "" {
		out("Model: " + t.Model())
		return nil
	}
	if err := t.Busy(); err != nil {
		return err
	}
	if _, err := t.Send(ctx, runtime.Send{Update: &runtime.SessionUpdate{Model: args}}); err != nil {
		return err
	}
	out("Model set to " + t.Model())
	return nil
}

func runRewind(ctx context.Context, t Target, args string, out func(string)) error {
	if args == "" {
		return errors.New("usage: /rewind <message id> (the transcript id of the first message to remove)")
	}
	if err := t.Busy(); err != nil {
		return err
	}
	res, err := t.Rewind(ctx, args)
	if err != nil {
		return err
	}
	out(fmt.Sprintf("Rewound: %d message(s) kept, %d event(s) in the history.", res.Messages, res.Events))
	return nil
}

func runToolsList(_ context.Context, t Target, _ string, out func(string)) error {
	var b strings.Builder
	b.WriteString("Available tools:\n")
	for _, ti := range t.Tools() {
		desc, _, _ := strings.Cut(ti.Description, "\n")
		fmt.Fprintf(&b, "- %s (%s): %s\n", ti.DisplayName, ti.Name, desc)
	}
	out(b.String())
	return nil
}

func runStats(_ context.Context, t Target, args string, out func(string)) error {
	if err := noArgs("stats", args); err != nil {
		return err
	}
	out(statsText(t.ID(), runstats.FromEvents(t.Events())))
	return nil
}

func runCompress(ctx context.Context, t Target, args string, out func(string)) error {
	if err := noArgs("compress", args); err != nil {
		return err
	}
	if err := t.Busy(); err != nil {
		return err
	}
	info, err := t.Compress(ctx)
	if err != nil {
		return err
	}
	out(compressionText(info))
	return nil
}

// compressionText says what a compression did, in gemini-cli's words
// where it has them.
func compressionText(info runtime.CompressionInfo) string {
	switch info.Status {
	case compression.StatusCompressed:
		return fmt.Sprintf("Chat history compressed from %d to %d tokens.", info.OriginalTokens, info.NewTokens)
	case compression.StatusContentTruncated:
		return fmt.Sprintf("Chat history truncated from %d to %d tokens: old tool outputs were shortened.", info.OriginalTokens, info.NewTokens)
	case compression.StatusFailedInflatedTokenCount:
		if info.OriginalTokens < 50_000 {
			return fmt.Sprintf("Compression was not beneficial for this history size (%d tokens; the summary would take %d); the history is unchanged.", info.OriginalTokens, info.NewTokens)
		}
		return fmt.Sprintf("Chat history compression did not reduce size (%d tokens; the summary would take %d). This may indicate issues with the compression prompt. The history is unchanged.", info.OriginalTokens, info.NewTokens)
	case compression.StatusFailedEmptySummary:
		return "Chat history compression failed: the model returned an empty summary. The history is unchanged."
	case compression.StatusFailedTokenCountError:
		return "Could not compress chat history due to a token counting error. The history is unchanged."
	}
	return "Nothing to compress: the history is too short to summarise."
}

func runApprovalMode(_ context.Context, t Target, args string, out func(string)) error {
	if args == "" {
		out(fmt.Sprintf("Approval mode: %s (modes: plan, default, auto_edit, yolo)", t.ApprovalMode()))
		return nil
	}
	if err := t.SetApprovalMode(runtime.ApprovalMode(args)); err != nil {
		return err
	}
	out(fmt.Sprintf("Approval mode set to %s.", t.ApprovalMode()))
	return nil
}

func runMCP(_ context.Context, t Target, args string, out func(string)) error {
	if err := noArgs("mcp", args); err != nil {
		return err
	}
	var servers []string
	byServer := map[string][]runtime.ToolInfo{}
	for _, ti := range t.Tools() {
		if ti.MCPServer == "" {
			continue
		}
		if byServer[ti.MCPServer] == nil {
			servers = append(servers, ti.MCPServer)
		}
		byServer[ti.MCPServer] = append(byServer[ti.MCPServer], ti)
	}
	if len(servers) == 0 {
		out("No MCP server tools in this conversation: no server is configured (settings mcpServers), none could be reached, or the workspace is not trusted.")
		return nil
	}
	slices.Sort(servers)
	var b strings.Builder
	fmt.Fprintf(&b, "MCP servers (%d):\n", len(servers))
	for _, s := range servers {
		ts := byServer[s]
		fmt.Fprintf(&b, "- %s: %d tool(s)\n", s, len(ts))
		for _, ti := range ts {
			name := ti.MCPTool
			if ti.Name != ti.MCPTool {
				name += " (called " + ti.Name + ")"
			}
			desc, _, _ := strings.Cut(ti.Description, "\n")
			if desc != "" {
				name += ": " + desc
			}
			fmt.Fprintf(&b, "  - %s\n", name)
		}
	}
	out(b.String())
	return nil
}

func runAgents(_ context.Context, t Target, args string, out func(string)) error {
	if err := noArgs("agents", args); err != nil {
		return err
	}
	agents := t.Agents()
	if len(agents) == 0 {
		out("No subagents: none is defined in ~/.agentry/agents or ~/.gemini/agents, or in a trusted workspace's .agentry/agents or .gemini/agents.")
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Subagents (%d):\n", len(agents))
	for _, a := range agents {
		name := a.Name
		if a.Remote {
			name += " (remote)"
		}
		desc, _, _ := strings.Cut(a.Description, "\n")
		fmt.Fprintf(&b, "- %s: %s\n", name, desc)
	}
	out(b.String())
	return nil
}

// mcpCommand is /mcp, with /mcp auth SERVER when the driver can walk an
// MCP server's OAuth flow (Config.MCPAuth).
func (r *Registry) mcpCommand() Command {
	c := Command{
		Name: "mcp", Description: "List the conversation's MCP servers and their tools",
		NeedsTarget: true, Run: runMCP,
	}
	if r.cfg.MCPAuth != nil {
		c.SubCommands = []Command{{
			Name: "auth", Description: "Authorize agentry with an MCP server that needs OAuth and store the token",
			Arguments: []Argument{{Name: "server", Description: "The server's name in mcpServers", Required: true}},
			Run: func(ctx context.Context, _ Target, args string, out func(string)) error {
				if args == "" || strings.ContainsFunc(args, unicode.IsSpace) {
					return errors.New("usage: /mcp auth SERVER")
				}
				return r.cfg.MCPAuth(ctx, args, out)
			},
		}}
	}
	return c
}
