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

	"github.com/agentry-dev/agentry/compose"
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
			if store, closeStore, err = compose.OpenStore(ctx, s, nil); err == nil {
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
		Short: "List this workspace's sessions, numbered as run -r takes them",
		Long: `List this workspace's stored sessions as gemini-cli's --list-sessions
numbers them: by the start of their latest run, oldest first (a resumed
session moves to the end). The number is the one "agentry run -r N" takes,
and the last session is "agentry run -r latest". Each row has the session's id,
its last update, its turns (the prompts it was given) and its first prompt.
With --all, every workspace's sessions, and their workspaces, unnumbered.`,
		Args: cobra.NoArgs,
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
				printSessions(io.out, list, all)
				return nil
			})
		},
	}
	list.Flags().BoolVar(&all, "all", false, "list the sessions of every workspace")
	var full bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a session's conversation",
		Long: `Print a stored session's conversation: each message with its id (for
"agentry sessions rewind"), who wrote it — "user", or the model that
answered — and its text, then the tool calls of a model message with their
arguments as JSON and their status. Long content is folded: a message
shows its first 20 lines, a line or a call's arguments their first 300
characters, each fold saying how much it hides; --full prints everything.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return with(c, func(ctx context.Context, _ *config.Settings, store sessionStore) error {
				sess, err := runtime.LoadSession(ctx, store, args[0])
				if err != nil {
					return err
				}
				f := folder{full: full, id: args[0]}
				if rec := loadTranscript(sess.Transcript); rec != nil {
					printTranscript(io.out, rec, f)
					return nil
				}
				printEvents(io.out, sess, f)
				return nil
			})
		},
	}
	show.Flags().BoolVar(&full, "full", false, "print long messages and arguments whole")
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

// previewWidth is how much of a session's first prompt a listing shows,
// in characters: with the other columns, a row fits a 120-column
// terminal.
const previewWidth = 50

// printSessions writes the rows of "sessions list": numbered, as run -r
// takes them, for one workspace; unnumbered, with the workspace, for all.
func printSessions(w goio.Writer, list []runtime.StoredSession, all bool) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No stored sessions for this workspace.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if all {
		fmt.Fprintln(tw, "ID\tUPDATED\tTURNS\tWORKSPACE\tFIRST PROMPT")
	} else {
		fmt.Fprintln(tw, "#\tID\tUPDATED\tTURNS\tFIRST PROMPT")
	}
	for i, l := range list {
		row := fmt.Sprintf("%s\t%s\t%d\t", l.ID, l.Updated.Local().Format(time.DateTime), l.Turns)
		if all {
			row += l.Workspace + "\t"
		} else {
			row = fmt.Sprintf("%d\t%s", i+1, row)
		}
		fmt.Fprintln(tw, row+cut(l.FirstPrompt, previewWidth))
	}
	tw.Flush()
}

// cut shortens s to at most n characters, marking a cut with "...".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// sessionStore is the store the subcommands read.
type sessionStore = runtime.SessionStore

// loadTranscript returns the transcript at a session's transcript path,
// or nil when it has none (a session stored before transcripts, or an
// unreadable file).
func loadTranscript(path string) *transcript.Record {
	if path == "" {
		return nil
	}
	rec, err := transcript.Load(path)
	if err != nil {
		return nil
	}
	return rec
}

// Folding limits of "sessions show" (see its help).
const (
	foldLines = 20
	foldWidth = 300
)

// folder shortens long content for "sessions show", unless full.
type folder struct {
	full bool
	// id is the session's, for the hint that --full shows everything.
	id string
}

// text returns s with its lines after the first foldLines replaced by
// one line saying how many were folded, and each line cut at foldWidth;
// continuation lines are indented under the message's first line.
func (f folder) text(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	hidden := 0
	if !f.full && len(lines) > foldLines {
		hidden = len(lines) - foldLines
		lines = lines[:foldLines]
	}
	for i, l := range lines {
		lines[i] = f.line(l)
	}
	out := strings.Join(lines, "\n    ")
	if hidden > 0 {
		out += fmt.Sprintf("\n    … %d more lines (agentry sessions show --full %s prints them)", hidden, f.id)
	}
	return out
}

// line cuts one line at foldWidth characters.
func (f folder) line(s string) string {
	r := []rune(s)
	if f.full || len(r) <= foldWidth {
		return s
	}
	return fmt.Sprintf("%s… (%d more characters)", string(r[:foldWidth]), len(r)-foldWidth)
}

// args is a tool call's arguments as compact JSON, cut at foldWidth.
func (f folder) args(args map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprintf("(arguments not JSON: %v)", err)
	}
	return f.line(strings.TrimSuffix(b.String(), "\n"))
}

// printTranscript prints each message with its id (for rewind), its
// author — the model that answered, for a model message — and its text;
// a model message's tool calls follow it.
func printTranscript(w goio.Writer, rec *transcript.Record, f folder) {
	for _, m := range rec.Messages {
		author := m.Type
		if m.Type == transcript.TypeGemini {
			author = firstNonEmpty(m.Model, "model")
		}
		if text := messageText(m.Content); strings.TrimSpace(text) != "" {
			fmt.Fprintf(w, "[%s] %s: %s\n", m.ID, author, f.text(text))
		} else {
			fmt.Fprintf(w, "[%s] %s:\n", m.ID, author) // tool calls alone
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "    %s %s -> %s\n", tc.Name, f.args(tc.Args), tc.Status)
		}
	}
}

// printEvents prints a session stored without a transcript from its
// events: each text with its author, each tool call and result.
func printEvents(w goio.Writer, sess *runtime.StoredConversation, f folder) {
	for _, m := range sess.Messages {
		author := m.Role
		if author == "model" {
			author = firstNonEmpty(m.Model, "model")
		}
		for _, p := range m.Parts {
			switch p.Kind {
			case runtime.StoredText:
				fmt.Fprintf(w, "%s: %s\n", author, f.text(p.Text))
			case runtime.StoredCall:
				fmt.Fprintf(w, "%s: [call %s %s]\n", author, p.Name, f.args(p.Args))
			case runtime.StoredResult:
				fmt.Fprintf(w, "%s: [result of %s]\n", author, p.Name)
			}
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
