package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/transcript"
)

// latestSession is --resume without a value, or -r latest.
const latestSession = "latest"

// resumeID picks the session --resume names, as gemini-cli's
// SessionSelector does: "latest" is the last of runtime.ListSessions (the
// session run most recently); otherwise a stored session id, else a
// number from --list-sessions.
func resumeID(ctx context.Context, store runtime.SessionStore, want, workspace string) (string, error) {
	if want == latestSession {
		list, err := runtime.ListSessions(ctx, store, workspace)
		if err != nil {
			return "", err
		}
		if len(list) == 0 {
			return "", &inputError{fmt.Sprintf("--resume: no stored session for workspace %s; run without --resume to start one", workspace)}
		}
		return list[len(list)-1].ID, nil
	}
	if _, err := runtime.LoadSession(ctx, store, want); err == nil {
		return want, nil
	}
	if n, err := strconv.Atoi(want); err == nil && strconv.Itoa(n) == want && n > 0 {
		list, err := indexedSessions(ctx, store, workspace)
		if err != nil {
			return "", err
		}
		if n <= len(list) {
			return list[n-1].id, nil
		}
	}
	return "", &inputError{fmt.Sprintf("--resume: no session %q for workspace %s; --list-sessions lists them: use --resume NUMBER, --resume ID or --resume latest", want, workspace)}
}

// listedSession is one line of --list-sessions.
type listedSession struct {
	id      string
	title   string
	started time.Time
	updated time.Time
}

// indexedSessions returns the workspace's sessions in --list-sessions
// order, runtime.ListSessions's (the one "agentry sessions list" numbers
// too), titled from their transcripts where they have one.
func indexedSessions(ctx context.Context, store runtime.SessionStore, workspace string) ([]listedSession, error) {
	stored, err := runtime.ListSessions(ctx, store, workspace)
	if err != nil {
		return nil, err
	}
	out := make([]listedSession, 0, len(stored))
	for _, s := range stored {
		l := listedSession{id: s.ID, started: s.Started, updated: s.Updated, title: cmp.Or(s.FirstPrompt, "Empty conversation")}
		if rec := loadTranscript(s.Transcript); rec != nil {
			l.title = sessionTitle(rec)
		}
		out = append(out, l)
	}
	return out, nil
}

// listSessions prints the workspace's sessions numbered for --resume, in
// gemini-cli's --list-sessions format.
func listSessions(ctx context.Context, s *config.Settings, w io.Writer, now time.Time) error {
	store, closeStore, err := compose.OpenStore(ctx, s, nil)
	if err != nil {
		return err
	}
	defer closeStore()
	list, err := indexedSessions(ctx, store, s.Workspace)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No previous sessions found for this project.")
		return err
	}
	fmt.Fprintf(w, "\nAvailable sessions for this project (%d):\n", len(list))
	for i, l := range list {
		title := l.title
		if r := []rune(title); len(r) > 100 {
			title = string(r[:97]) + "..."
		}
		if _, err := fmt.Fprintf(w, "  %d. %s (%s) [%s]\n", i+1, title, relativeTime(now, l.updated), l.id); err != nil {
			return err
		}
	}
	return nil
}

// sessionTitle is the summary of a conversation, else its first user
// message that is not a command, cleaned to one line.
func sessionTitle(rec *transcript.Record) string {
	if rec.Summary != "" {
		return cleanTitle(rec.Summary)
	}
	first := ""
	for _, m := range rec.Messages {
		if m.Type != transcript.TypeUser {
			continue
		}
		raw := m.DisplayContent
		if len(raw) == 0 {
			raw = m.Content
		}
		text := messageText(raw)
		if first == "" {
			first = text
		}
		if t := strings.TrimSpace(text); t != "" && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "?") {
			return cleanTitle(text)
		}
	}
	if first == "" {
		return "Empty conversation"
	}
	return cleanTitle(first)
}

// cleanTitle folds white space to single spaces and drops control
// characters. (gemini-cli also drops every non-ASCII character; agentry
// keeps them, so that a prompt in another script stays readable.)
func cleanTitle(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// relativeTime is gemini-cli's long relative time: "3 days ago",
// "1 hour ago", "5 minutes ago", "Just now".
func relativeTime(now, t time.Time) string {
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s ago", unit)
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d >= 24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day")
	case d >= time.Hour:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute:
		return plural(int(d/time.Minute), "minute")
	}
	return "Just now"
}

// spaceSeparatedResume rewrites "-r VALUE" and "--resume VALUE" into
// "--resume=VALUE" for the commands that take run's flags, so that
// gemini-cli's "-r latest", "-r 3" and "-r ID" work while a bare "--resume"
// (followed by a flag, or nothing) still means the latest session. As in
// gemini-cli, the word after -r is its value.
func spaceSeparatedResume(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Flags().Lookup("resume") == nil || cmd.Flags().ShorthandLookup("r") == nil {
		return args
	}
	fs := cmd.Flags()
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if (a == "-r" || a == "--resume") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out[len(out)-1] = "--resume=" + args[i+1]
			i++
			continue
		}
		// Skip the value of a flag that takes one, so that it is never
		// read as a flag itself (-p -r is a prompt "-r").
		if takesValue(fs, a) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// takesValue reports whether the argument a is a flag of fs whose value is
// the next argument.
func takesValue(fs *pflag.FlagSet, a string) bool {
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
		f = fs.Lookup(a[2:])
	case strings.HasPrefix(a, "-") && len(a) >= 2 && !strings.Contains(a, "="):
		// In "-yp", the last letter may take the next argument.
		f = fs.ShorthandLookup(a[len(a)-1:])
		if len(a) > 2 && f != nil && f.NoOptDefVal == "" {
			// "-pVALUE" carries its value; only a run of boolean
			// shorthands leaves it to the next argument.
			for _, c := range a[1 : len(a)-1] {
				if g := fs.ShorthandLookup(string(c)); g == nil || g.NoOptDefVal == "" {
					return false
				}
			}
		}
	}
	return f != nil && f.NoOptDefVal == ""
}
