// Command agentry is a pluggable agent runtime: it runs gemini-cli's agent
// loop on ADK for Go, in batch runs from scripts and CI.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/internal/version"
)

func main() {
	os.Exit(Main(context.Background(), os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// stdio is the process's standard streams, injectable for tests.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// Main runs the agentry command line and returns the exit code.
func Main(ctx context.Context, args []string, io stdio) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	exit := 0
	root := &cobra.Command{
		Use:           "agentry",
		Short:         "agentry runs coding agents: gemini-cli's agent loop on ADK for Go",
		Version:       version.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetArgs(args)
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	root.AddCommand(newRunCommand(io, sigs, &exit), newSessionsCommand(io, &exit), newBatchCommand(io, sigs, &exit), newAgentsCommand(io, &exit), newServeCommand(io, sigs, &exit), newVersionCommand(io))
	if err := root.ExecuteContext(ctx); err != nil {
		// Errors from run itself were already reported with their exit
		// code; what reaches here is cobra's: unknown commands and flags.
		if exit == 0 {
			writeErrorLine(io.err, err)
			exit = exitInput
		}
	}
	return exit
}
