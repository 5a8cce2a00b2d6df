package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
)

// maxListDescription bounds a description in the table, so one long
// description does not push every row off the screen.
const maxListDescription = 60

// agentListing is one agent in `agents list --json`.
type agentListing struct {
	Name        string    `json:"name"`
	Kind        string    `json:"kind"`
	Scope       string    `json:"scope"`
	Description string    `json:"description"`
	File        string    `json:"file"`
	Model       string    `json:"model,omitempty"`
	Tools       *[]string `json:"tools,omitempty"`
	MaxTurns    int       `json:"max_turns"`
	TimeoutMins int       `json:"timeout_mins"`
	AgentCard   string    `json:"agent_card_url,omitempty"`
}

// agentsListing is `agents list --json`'s object.
type agentsListing struct {
	Agents   []agentListing `json:"agents"`
	Errors   []string       `json:"errors"`
	Warnings []string       `json:"warnings"`
}

// newAgentsCommand is `agentry agents list`: the subagents a session of
// this workspace can hand tasks to, and the definitions that did not load.
func newAgentsCommand(io stdio, exit *int) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the subagents defined for this workspace",
	}
	var workspace string
	var trust, asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the subagents and the definitions that do not load",
		Long: `List the subagents a session in this workspace can use: Markdown files
with YAML front matter in ~/.agentry/agents and ~/.gemini/agents, and, in a
trusted workspace, <workspace>/.agentry/agents and .gemini/agents (which win
over the user's on a name clash).

Definitions that do not load are reported on stderr, each with its file,
line and field, and the exit code is then 52; definitions an untrusted
workspace holds and names defined twice are warnings.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			s, err := config.Load(config.LoadOptions{Workspace: workspace, TrustWorkspace: trust})
			if err != nil {
				writeErrorLine(io.err, err)
				*exit, _ = exitFor(err)
				return nil
			}
			defs, errs := compose.LoadAgents(s)
			out := agentsListing{Agents: []agentListing{}, Errors: []string{}, Warnings: []string{}}
			for _, d := range defs {
				maxTurns, timeout := d.MaxTurns, d.TimeoutMins
				if d.Kind == agents.KindLocal {
					if maxTurns == 0 {
						maxTurns = subagents.DefaultMaxTurns
					}
					if timeout == 0 {
						timeout = int(subagents.DefaultTimeout.Minutes())
					}
				}
				l := agentListing{
					Name: d.Name, Kind: string(d.Kind), Scope: string(d.Scope), Description: d.Description,
					File: d.File, Model: d.Model, MaxTurns: maxTurns, TimeoutMins: timeout, AgentCard: d.AgentCardURL,
				}
				if d.Tools != nil {
					l.Tools = &d.Tools
				}
				if d.Kind == agents.KindLocal && l.Model == "" {
					l.Model = "inherit"
				}
				out.Agents = append(out.Agents, l)
			}
			for _, err := range errs {
				if errors.Is(err, agents.ErrUntrusted) || errors.Is(err, agents.ErrDuplicate) {
					out.Warnings = append(out.Warnings, err.Error())
				} else {
					out.Errors = append(out.Errors, err.Error())
				}
			}
			if len(out.Errors) > 0 {
				*exit = runtime.ExitConfig
			}
			if asJSON {
				enc := json.NewEncoder(io.out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			for _, w := range out.Warnings {
				fmt.Fprintf(io.err, "[WARNING] %s\n", w)
			}
			for _, e := range out.Errors {
				fmt.Fprintf(io.err, "Error: %s\n", e)
			}
			if len(out.Agents) == 0 {
				dirs := agents.LoadConfig{Workspace: s.Workspace, Home: filepath.Dir(s.Home), Trusted: s.Trusted}.Dirs()
				var names []string
				for _, d := range dirs {
					names = append(names, d.Dir)
				}
				fmt.Fprintf(io.out, "No agents defined. Add a Markdown file with YAML front matter (name, description) to %s.\n", strings.Join(names, " or "))
				return nil
			}
			tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tSCOPE\tDESCRIPTION\tFILE")
			for _, a := range out.Agents {
				desc := strings.Join(strings.Fields(a.Description), " ")
				if r := []rune(desc); len(r) > maxListDescription {
					desc = string(r[:maxListDescription-1]) + "…"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Kind, a.Scope, desc, a.File)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVarP(&workspace, "workspace", "w", "", "the workspace directory (default the current directory)")
	list.Flags().BoolVar(&trust, "trust-workspace", false, "trust the workspace: list its own agents too")
	list.Flags().BoolVar(&asJSON, "json", false, "print the agents, errors and warnings as one JSON object")
	cmd.AddCommand(list)
	return cmd
}
