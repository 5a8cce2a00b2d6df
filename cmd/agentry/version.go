package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentry-dev/agentry/internal/version"
)

// newVersionCommand is `agentry version`: the line --version prints, then
// what a bug report needs of the build.
func newVersionCommand(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print agentry's version and build",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := version.Build()
			fmt.Fprintf(io.out, "agentry version %s\n", b.Version)
			fmt.Fprintf(io.out, "go: %s %s/%s\n", b.Go, b.OS, b.Arch)
			if b.Revision != "" {
				modified := ""
				if b.Modified {
					modified = " (modified)"
				}
				fmt.Fprintf(io.out, "commit: %s%s\n", b.Revision, modified)
			}
			switch b.CGO {
			case "0":
				fmt.Fprintln(io.out, "cgo: off")
			case "1":
				fmt.Fprintln(io.out, "cgo: on")
			}
			return nil
		},
	}
}
