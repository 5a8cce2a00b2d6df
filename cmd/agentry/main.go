// Command agentry is a pluggable agent runtime: it runs gemini-cli's agent
// loop on ADK for Go, in batch runs from scripts and CI.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/internal/version"
	"github.com/agentry-dev/agentry/runtime"
)

func main() {
	// The genai client warns on the standard logger whenever both API key
	// variables are set, naming GOOGLE_API_KEY even when agentry sends the
	// other; agentry's own warning names the key it uses.
	log.SetOutput(dropLines{w: os.Stderr, drop: "Both GOOGLE_API_KEY and GEMINI_API_KEY are set"})
	os.Exit(Main(context.Background(), os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// dropLines writes through to w every log line that does not contain drop.
type dropLines struct {
	w    io.Writer
	drop string
}

func (d dropLines) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(d.drop)) {
		return len(p), nil
	}
	return d.w.Write(p)
}

// stdio is the process's standard streams, injectable for tests.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// Main runs the agentry command line and returns the exit code.
func Main(ctx context.Context, args []string, io stdio) int {
	// Signals are caught first of all, so that none is ever ignored: see
	// interrupts.
	raw := make(chan os.Signal, 2)
	signal.Notify(raw, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(raw)
		close(raw)
	}()
	in := watchInterrupts(raw, io.err, os.Exit)

	exit := 0
	root := newRoot(io, in, &exit)
	root.SetArgs(spaceSeparatedResume(root, args))
	if err := root.ExecuteContext(ctx); err != nil {
		// Errors from run itself were already reported with their exit
		// code; what reaches here is cobra's: unknown commands and flags.
		if exit == 0 {
			writeErrorLine(io.err, err)
			exit = runtime.ExitInput
		}
	}
	return exit
}

// newRoot builds the command tree; the commands store their exit code in
// exit.
func newRoot(io stdio, in *interrupts, exit *int) *cobra.Command {
	rf := &runFlags{}
	root := &cobra.Command{
		Use:   "agentry [-p PROMPT] [flags]",
		Short: "agentry runs coding agents: gemini-cli's agent loop on ADK for Go",
		Long: `agentry runs coding agents: gemini-cli's agent loop on ADK for Go.

On a terminal, a bare agentry starts the interactive session in the current
directory (or -w): a chat over the same session "agentry run" uses, with
confirmations, slash commands (/help), @path references and !shell commands.
-i "…" sends a first prompt and stays; -r [ID|latest|NUMBER] continues a
stored session.

With -p, or with a prompt piped to stdin, agentry runs the prompt headless,
exactly as "agentry run" does (agentry -p "…" is gemini-cli's gemini -p "…").`,
		Version:       version.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          rootArgs,
		// As cobra's own unknown-command error would suggest.
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			interactive, err := rootMode(cmd, rf, args, io)
			switch {
			case err != nil:
				*exit = newPrinter("text", io, false, time.Now()).fail(err)
			case interactive:
				*exit = runInteractive(cmd.Context(), cmd, rf, io, in)
			case cmd.Flags().NFlag() == 0 && len(args) == 0 && stdinOf(io.in) != stdinPiped:
				return cmd.Help()
			default:
				*exit = runMain(cmd.Context(), cmd, rf, args, io, in)
			}
			return nil
		},
	}
	addRunFlags(root.Flags(), rf)
	root.Flags().StringVarP(&rf.promptInteractive, "prompt-interactive", "i", "", "start the interactive session with this first prompt, then stay")
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	// A batch handles signals from its start: its results so far are kept.
	batch := newBatchCommand(io, in.c, exit)
	batch.PreRun = func(*cobra.Command, []string) { in.handle() }
	root.AddCommand(newRunCommand(io, in, exit), newSessionsCommand(io, exit), batch, newAgentsCommand(io, exit), newServeCommand(io, in, exit), newAttachCommand(io, in, exit), newA2ACommand(io, in, exit), addIDECompanion(newIDECmd(io, exit), io, in, exit), newWorkerCommand(io, in, exit), newMCPCommand(io, exit), newVersionCommand(io))
	return root
}

// rootArgs refuses words after a bare "agentry": they are a misspelt
// command far more often than a prompt, and a prompt is given with -p, as
// gemini-cli asks for headless runs.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg + `; to run a prompt, give it with -p: agentry -p "…"`)
}
