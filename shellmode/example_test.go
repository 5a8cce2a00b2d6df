package shellmode_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentry-dev/agentry/shellmode"
)

func ExampleRunner_Run() {
	dir, err := os.MkdirTemp("", "workspace-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r, err := shellmode.New(shellmode.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	command := "echo hello; exit 2"
	res, err := r.Run(context.Background(), command, func(chunk string) {
		// The terminal shows chunk as it arrives.
	})
	if err != nil {
		log.Fatal(err)
	}
	// The model is given one user history item.
	fmt.Println(res.HistoryText(command))
	// Output:
	// I ran the following shell command:
	// ```sh
	// echo hello; exit 2
	// ```
	//
	// This produced the following result:
	// ```
	// Command exited with code 2.
	// hello
	// ```
}
