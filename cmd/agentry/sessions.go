package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goio "io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/transcript"
)

// newSessionsCommand is `agentry sessions list|show|rewind|delete`: the stored
// conversations of the session store the settings name.
func newSessionsCommand(io stdio, exit *int) *cobra.Command {
	var workspace string
	var all bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, rewind and delete stored sessions",
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
				if rec := loadTranscript(sess); rec != nil {
					printTranscript(io.out, rec)
					return nil
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
	var to string
	rewind := &cobra.Command{
		Use:   "rewind ID --to MESSAGE_ID",
		Short: "Drop a message and everything after it from a session",
		Long: `Rewind a stored session, as gemini-cli's /rewind does: the message named
by --to and every later message leave the transcript, and the session's
history is rebuilt from the messages kept. "agentry sessions show ID" lists
the message ids; the next "agentry run --resume ID" continues from there.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return with(c, func(ctx context.Context, _ *config.Settings, store sessionStore) error {
				if to == "" {
					return fmt.Errorf("%w: --to MESSAGE_ID is required; \"agentry sessions show %s\" lists the message ids", runtime.ErrNoMessage, args[0])
				}
				res, err := runtime.Rewind(ctx, store, args[0], to)
				if err != nil {
					return err
				}
				fmt.Fprintf(io.out, "Rewound session %s to before message %s: %d messages kept.\n", args[0], to, res.Messages)
				return nil
			})
		},
	}
	rewind.Flags().StringVar(&to, "to", "", "the id of the first message to drop")
	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a stored session, with its subagents' sessions and the transcripts",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return with(c, func(ctx context.Context, _ *config.Settings, store sessionStore) error {
				transcripts, err := runtime.DeleteSession(ctx, store, args[0])
				var errs []error
				for _, path := range transcripts {
					if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, err)
					}
					// A subagent's transcript lives in a directory named
					// after its parent; the last one out removes it.
					if dir := filepath.Dir(path); filepath.Base(dir) == args[0] {
						_ = os.Remove(dir) // fails, as it should, while not empty
					}
				}
				if err != nil {
					return err
				}
				if len(errs) > 0 {
					return fmt.Errorf("session %s deleted, but not all its transcripts: %w", args[0], errors.Join(errs...))
				}
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, rewind, del)
	return cmd
}

// sessionStore is the store the subcommands read.
type sessionStore = session.Service

// loadTranscript returns the session's transcript, or nil when it has
// none (a session stored before transcripts, or an unreadable file).
func loadTranscript(sess session.Session) *transcript.Record {
	p, _ := sess.State().Get(runtime.StateTranscript)
	path, _ := p.(string)
	if path == "" {
		return nil
	}
	rec, err := transcript.Load(path)
	if err != nil {
		return nil
	}
	return rec
}

// printTranscript prints each message with its id (for rewind), its type
// and its text; a gemini message's tool calls follow it.
func printTranscript(w goio.Writer, rec *transcript.Record) {
	for _, m := range rec.Messages {
		fmt.Fprintf(w, "[%s] %s: %s\n", m.ID, m.Type, strings.TrimRight(messageText(m.Content), "\n"))
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "    %s %v -> %s\n", tc.Name, tc.Args, tc.Status)
		}
	}
}

// messageText is the text of a message's content: a string or the text
// parts of a part list.
func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
