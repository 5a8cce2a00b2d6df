package a2acli_test

import (
	"context"
	"fmt"
	"os"

	"github.com/agentry-dev/agentry/a2acli"
)

// Send a prompt to agentry serve over gRPC, allowing the calls it asks
// about, and exit as agentry a2a does.
func Example() {
	o, err := a2acli.Run(context.Background(), a2acli.Config{
		URL:       "http://127.0.0.1:41242",
		Transport: a2acli.TransportGRPC,
		Token:     os.Getenv("AGENTRY_A2A_TOKEN"),
		Prompt:    "Run the tests and summarise the failures",
		Approve:   a2acli.ApproveYes,
		Out:       os.Stdout,
		Err:       os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(a2acli.ExitCode(o, err))
}
