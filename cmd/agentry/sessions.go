package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
)

// newSessionsCommand is `agentry sessions list|show|delete`: the stored
// conversations of the session store the settings name.
func newSessionsCommand(io stdio, exit *int) *cobra.Command {
	var workspace string
	var all bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and delete stored sessions",
	}
	cmd.PersistentFlags().StringVarP(&workspace, "workspace", "w", "", "the workspace directory (default the current directory)")
	// with opens the store and runs fn, reporting its error with the
	// right exit code.
	with := func(c *cobra.Command, fn func(ctx context.Context, s *config.Settings, store sessionStore) error) error {
		ctx := c.Context()
		s, err := config.Load(config.LoadOptions{Workspace: workspace})
		if err == nil {
			var store sessionStore
			var closeStore func() error
			if store, closeStore, err = runtime.OpenStore(ctx, s, nil); err == nil {
				defer closeStore()
				err = fn(ctx, s, store)
			}
		}
		if err != nil {
			writeErrorLine(io.err, err)
			*exit, _ = exitFor(err)
		}
		return nil
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List this workspace's sessions, most recent first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return with(c, func(ctx context.Context, s *config.Settings, store sessionStore) error {
				ws := s.Workspace
				if all {
					ws = ""
				}
				list, err := runtime.ListSessions(ctx, store, ws)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tWORKSPACE")
				for _, l := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", l.ID, l.Updated.Local().Format(time.DateTime), l.Workspace)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "list the sessions of every workspace")
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return with(c, func(ctx context.Context, _ *config.Settings, store sessionStore) error {
				sess, err := runtime.GetSession(ctx, store, args[0])
				if err != nil {
					return err
				}
				for ev := range sess.Events().All() {
					if ev.Content == nil {
						continue
					}
					for _, p := range ev.Content.Parts {
						switch {
						case p.Thought:
						case p.Text != "":
							fmt.Fprintf(io.out, "%s: %s\n", ev.Content.Role, strings.TrimRight(p.Text, "\n"))
						case p.FunctionCall != nil:
							fmt.Fprintf(io.out, "%s: [call %s %v]\n", ev.Content.Role, p.FunctionCall.Name, p.FunctionCall.Args)
						case p.FunctionResponse != nil:
							fmt.Fprintf(io.out, "%s: [result of %s]\n", ev.Content.Role, p.FunctionResponse.Name)
						}
					}
				}
				return nil
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a stored session",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return with(c, func(ctx context.Context, _ *config.Settings, store sessionStore) error {
				return runtime.DeleteSession(ctx, store, args[0])
			})
		},
	}
	cmd.AddCommand(list, show, del)
	return cmd
}

// sessionStore is the store the subcommands read.
type sessionStore = session.Service
