package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/a2acli"
)

// a2aFlags are agentry a2a's flags.
type a2aFlags struct {
	transport string
	plain     bool
	token     string
	contextID string
	taskID    string
	output    string
	approve   string
}

func newA2ACommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	f := &a2aFlags{}
	cmd := &cobra.Command{
		Use:   "a2a [flags] URL [PROMPT...]",
		Short: "Send a prompt to an A2A agent and stream its answer",
		Long: `Send a prompt to the A2A agent at URL and stream the task's events: the
answer on stdout, thoughts and tool calls on stderr.

URL is the agent's base URL (http://127.0.0.1:41242, agentry serve's) or
its agent card's URL; the card says how to reach the agent: --transport
auto takes live (SendLiveMessage on gRPC) when the card declares
bidiStreaming, else the card's first interface a2a-go speaks. With
--transport ws URL may be the /ws endpoint's ws:// URL. PROMPT is the
arguments joined by spaces, else all of stdin.

A tool call that needs approval is asked about on the terminal (y allow
once, a allow always, n cancel), reading the answer from stdin when the
prompt came from the arguments, else from the terminal; when nothing can
answer, the call is declined. --approve yes|no answers every confirmation
without asking. The development-tool extension is asked for unless
--plain; a plain agent's question is answered with a line of text.

Exit codes: 0 the task completed, 1 it failed, was cancelled or rejected,
or the agent could not be reached, 2 a usage error, 3 the task waits for
input nothing here could give (a question with no answer to read), 130
interrupted (the task is cancelled).`,
		Example: `  AGENTRY_A2A_TOKEN=… agentry a2a http://127.0.0.1:41242 "list the files"
  agentry a2a --transport grpc --approve no http://127.0.0.1:41242 "what is in go.mod?"
  agentry a2a --task TASK_ID http://127.0.0.1:41242      # follow a task
  echo "summarise README.md" | agentry a2a -o json http://127.0.0.1:41242`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = runA2A(cmd.Context(), cmd, f, args, io, in)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.transport, "transport", a2acli.TransportAuto, "how to reach the agent: "+strings.Join(a2acli.Transports(), ", "))
	fl.BoolVar(&f.plain, "plain", false, "plain A2A: do not ask for the development-tool extension")
	fl.StringVar(&f.token, "token", "", "the agent's bearer token (default: "+tokenEnv+")")
	fl.StringVar(&f.contextID, "context", "", "continue the conversation of this contextId")
	fl.StringVar(&f.taskID, "task", "", "continue this task: without a PROMPT, follow it (reattach); with one, answer it")
	fl.StringVarP(&f.output, "output", "o", a2acli.OutputText, "text (the answer on stdout) or json (every event as an A2A JSON line)")
	fl.StringVar(&f.approve, "approve", a2acli.ApproveAsk, "confirmations: ask, yes (allow once) or no (decline)")
	// A usage error is exit code 2, as the command's help says, not the
	// run's 42.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		writeErrorLine(io.err, fmt.Errorf("%w; see agentry a2a --help", err))
		*exit = a2acli.ExitUsage
		return err
	})
	return cmd
}

// runA2A runs agentry a2a and returns its exit code.
func runA2A(ctx context.Context, cmd *cobra.Command, f *a2aFlags, args []string, std stdio, in *interrupts) int {
	usage := func(msg string) int {
		writeErrorLine(std.err, fmt.Errorf("agentry a2a: %s; see agentry a2a --help", msg))
		return a2acli.ExitUsage
	}
	if len(args) == 0 {
		return usage("give the agent's URL, e.g. agentry a2a http://127.0.0.1:41242 \"list the files\"")
	}
	token := f.token
	if !cmd.Flags().Changed("token") {
		token = strings.TrimSpace(os.Getenv(tokenEnv))
	}
	cfg := a2acli.Config{
		URL: args[0], Transport: f.transport, Plain: f.plain, Token: token,
		ContextID: f.contextID, TaskID: f.taskID, Output: f.output, Approve: f.approve,
		Out: std.out, Err: std.err,
		Dim: isTerminal(std.err) && os.Getenv("NO_COLOR") == "",
	}
	// The prompt: the arguments, else stdin (unless a task is followed).
	// Answers come from whatever the prompt did not take.
	cfg.Answers = func() (io.Reader, error) { return std.in, nil }
	switch {
	case len(args) > 1:
		cfg.Prompt = strings.Join(args[1:], " ")
	case f.taskID != "":
	case stdinOf(std.in) == stdinTerminal:
		return usage("no prompt: give it as arguments after the URL, or pipe it to stdin")
	default:
		p, err := readAll(std.in)
		if err != nil {
			return usage(err.Error())
		}
		if strings.TrimSpace(p) == "" {
			return usage("no prompt: stdin was empty; give the prompt as arguments after the URL, or pipe it to stdin")
		}
		cfg.Prompt = p
		cfg.Answers = openTTY
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sigs := in.handle()
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("%v", s))
		case <-ctx.Done():
		}
	}()
	o, err := a2acli.Run(ctx, cfg)
	code := a2acli.ExitCode(o, err)
	switch {
	case errors.Is(err, a2acli.ErrInterrupted):
		fmt.Fprintln(std.err, "Interrupted.")
	case code == a2acli.ExitUsage:
		return usage(err.Error())
	case err != nil:
		writeErrorLine(std.err, fmt.Errorf("agentry a2a: %w", err))
	}
	return code
}

// readAll reads the prompt from stdin, up to the size a run takes.
func readAll(in io.Reader) (string, error) {
	b, err := io.ReadAll(bufio.NewReader(io.LimitReader(in, maxStdinBytes+1)))
	if err != nil {
		return "", fmt.Errorf("reading the prompt from stdin: %w", err)
	}
	if len(b) > maxStdinBytes {
		return "", fmt.Errorf("stdin holds more than %d MB; give a smaller prompt", maxStdinBytes>>20)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// openTTY opens the controlling terminal for answers when stdin held the
// prompt.
func openTTY() (io.Reader, error) {
	f, err := os.Open("/dev/tty")
	if err != nil {
		return nil, fmt.Errorf("stdin held the prompt and there is no terminal: %w", err)
	}
	return f, nil
}
