package a2acli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/agentry-dev/agentry/internal/ansi"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// maxAsks bounds how often one confirmation is asked again after an
// answer that is none of its options.
const maxAsks = 5

// errNoAnswer reports that nothing can answer: no reader, or it ended.
var errNoAnswer = errors.New("nothing to read an answer from")

// asker asks the user the task's questions and reads the answers, one
// line each, from the reader Config.Answers opens (on first use). Once a
// read fails, every later question fails the same way.
type asker struct {
	approve string
	open    func() (io.Reader, error)
	w       io.Writer // where questions are written

	// lines receives the reader's lines from the one goroutine reading
	// them, so that a question withdrawn mid-read leaves no second reader
	// behind.
	lines chan lineRead
	tty   bool  // the reader is a terminal, which echoes the answer itself
	err   error // why nothing can answer, once known
}

// lineRead is one line read, or the error that ended the reading.
type lineRead struct {
	s   string
	err error
}

func newAsker(cfg *Config) *asker {
	return &asker{approve: cfg.Approve, open: cfg.Answers, w: cfg.Err}
}

// ready opens the reader on first use, and reports why nothing can
// answer.
func (a *asker) ready() error {
	if a.err != nil || a.lines != nil {
		return a.err
	}
	if a.open == nil {
		a.err = errNoAnswer
		return a.err
	}
	r, err := a.open()
	if err != nil {
		a.err = fmt.Errorf("%w: %w", errNoAnswer, err)
		return a.err
	}
	f, ok := r.(*os.File)
	a.tty = ok && term.IsTerminal(int(f.Fd()))
	a.lines = make(chan lineRead)
	go func() {
		br := bufio.NewReader(r)
		for {
			s, err := br.ReadString('\n')
			if err == io.EOF && s != "" {
				err = nil
			}
			a.lines <- lineRead{strings.TrimRight(s, "\r\n"), err}
			if err != nil {
				return
			}
		}
	}()
	return nil
}

// line reads one answer; ctx ending abandons the read.
func (a *asker) line(ctx context.Context) (string, error) {
	if err := a.ready(); err != nil {
		return "", err
	}
	select {
	case res := <-a.lines:
		if res.err != nil {
			if res.err == io.EOF {
				a.err = fmt.Errorf("%w: the input ended", errNoAnswer)
			} else {
				a.err = fmt.Errorf("%w: %w", errNoAnswer, res.err)
			}
			return "", a.err
		}
		if !a.tty {
			// What a terminal would have echoed.
			fmt.Fprintln(a.w, oneLine(res.s))
		}
		return res.s, nil
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// choice is one option of a confirmation with the key that picks it.
type choice struct {
	key string
	opt devtool.ConfirmationOption
}

// optionKeys are the keys of the options agentry offers: y(es), a(lways),
// s(ave: always, and in later sessions), n(o). Other options are picked by
// their number.
var optionKeys = map[string]string{
	devtool.OptionProceedOnce:          "y",
	devtool.OptionProceedAlways:        "a",
	devtool.OptionProceedAlwaysAndSave: "s",
	devtool.OptionCancel:               "n",
}

func choices(cr *devtool.ConfirmationRequest) []choice {
	out := make([]choice, 0, len(cr.Options))
	for i, o := range cr.Options {
		key := optionKeys[o.ID]
		if key == "" {
			key = strconv.Itoa(i + 1)
		}
		out = append(out, choice{key: key, opt: o})
	}
	return out
}

// confirm decides a pending call: --approve yes or no, or the user's
// answer. declined is set when nothing could answer and the call is
// cancelled for that reason.
func (a *asker) confirm(ctx context.Context, tc devtool.ToolCall) (option string, declined error, err error) {
	switch a.approve {
	case ApproveYes:
		return devtool.OptionProceedOnce, nil, nil
	case ApproveNo:
		return devtool.OptionCancel, nil, nil
	}
	cs := choices(tc.ConfirmationRequest)
	a.show(tc, cs)
	if err := a.ready(); err != nil {
		return devtool.OptionCancel, err, nil
	}
	for range maxAsks {
		keys := make([]string, len(cs))
		for i, c := range cs {
			keys[i] = c.key
		}
		fmt.Fprintf(a.w, "Answer [%s]: ", strings.Join(keys, "/"))
		s, err := a.line(ctx)
		if errors.Is(err, errNoAnswer) {
			fmt.Fprintln(a.w)
			return devtool.OptionCancel, err, nil
		}
		if err != nil {
			return "", nil, err
		}
		if id, ok := pick(cs, s); ok {
			return id, nil, nil
		}
		fmt.Fprintf(a.w, "%q is none of the answers.\n", oneLine(s))
	}
	return devtool.OptionCancel, fmt.Errorf("%w: no answer was one of the options after %d tries", errNoAnswer, maxAsks), nil
}

// pick reads an answer: an option's key, its id, or a word for it (yes,
// always, save, no).
func pick(cs []choice, s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	words := map[string]string{"yes": "y", "once": "y", "always": "a", "save": "s", "no": "n", "cancel": "n"}
	if k, ok := words[s]; ok {
		s = k
	}
	for _, c := range cs {
		if s == c.key || s == strings.ToLower(c.opt.ID) {
			return c.opt.ID, true
		}
	}
	return "", false
}

// show writes the call awaiting approval: the tool, what it would do, and
// the options.
func (a *asker) show(tc devtool.ToolCall, cs []choice) {
	w := a.w
	cr := tc.ConfirmationRequest
	fmt.Fprintf(w, "\n? %s needs your approval", oneLine(tc.ToolName))
	if tc.Description != "" && cr.ExecuteDetails == nil && cr.FileEditDetails == nil {
		fmt.Fprintf(w, ": %s", trim(oneLine(tc.Description)))
	}
	fmt.Fprintln(w)
	switch {
	case cr.ExecuteDetails != nil:
		fmt.Fprintf(w, "  command: %s\n", oneLine(cr.ExecuteDetails.Command))
		if d := cr.ExecuteDetails.WorkingDirectory; d != "" {
			fmt.Fprintf(w, "  in: %s\n", oneLine(d))
		}
	case cr.FileEditDetails != nil:
		fmt.Fprintf(w, "  file: %s\n", oneLine(cr.FileEditDetails.FilePath))
		if d := cr.FileEditDetails.FormattedDiff; d != "" {
			for _, l := range strings.Split(strings.TrimRight(ansi.DropControls(ansi.Strip(d)), "\n"), "\n") {
				fmt.Fprintf(w, "  %s\n", l)
			}
		}
	case cr.McpDetails != nil:
		fmt.Fprintf(w, "  MCP tool %s of server %s\n", oneLine(cr.McpDetails.ToolName), oneLine(cr.McpDetails.ServerName))
	case cr.GenericDetails != nil:
		fmt.Fprintf(w, "  %s\n", oneLine(cr.GenericDetails.Description))
	}
	for _, c := range cs {
		desc := ""
		if c.opt.Description != "" {
			desc = " — " + oneLine(c.opt.Description)
		}
		fmt.Fprintf(w, "  %s) %s%s\n", c.key, oneLine(c.opt.Name), desc)
	}
}

// question asks a plain question (an input-required status message's
// text) and returns the answer, a line that is not empty.
func (a *asker) question(ctx context.Context, text string) (string, error) {
	text = strings.TrimSpace(ansi.DropControls(ansi.Strip(text)))
	if text == "" {
		text = "The agent waits for your reply."
	}
	fmt.Fprintf(a.w, "\n? %s\n", text)
	if err := a.ready(); err != nil {
		return "", err
	}
	fmt.Fprint(a.w, "> ")
	s, err := a.line(ctx)
	if err != nil {
		if errors.Is(err, errNoAnswer) {
			fmt.Fprintln(a.w)
		}
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%w: the answer was empty", errNoAnswer)
	}
	return s, nil
}
