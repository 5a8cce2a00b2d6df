package prompthist_test

import (
	"fmt"
	"log"
	"os"

	"github.com/agentry-dev/agentry/prompthist"
)

func Example() {
	tempDir, err := os.MkdirTemp("", "project-") // config's Settings.TempDir()
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tempDir)

	h, err := prompthist.Open(prompthist.Config{Path: prompthist.Path(tempDir)})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"explain main.go", "add a test", "add a test"} {
		if err := h.Add("session-1", p); err != nil {
			log.Fatal(err)
		}
	}
	// The input box's Up and Down.
	prev, _ := h.Up("half-typed draft")
	fmt.Println(prev)
	prev, _ = h.Up(prev)
	fmt.Println(prev)
	next, _ := h.Down(prev)
	fmt.Println(next)
	draft, _ := h.Down(next)
	fmt.Println(draft)
	// Output:
	// add a test
	// explain main.go
	// add a test
	// half-typed draft
}
