package complete_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/complete"
	"github.com/agentry-dev/agentry/tools"
)

func ExampleCommands() {
	cmds := []complete.Command{
		{Name: "help"},
		{Name: "memory", SubCommands: []complete.Command{{Name: "show"}, {Name: "reload"}}},
	}
	for _, input := range []string{"/mem", "/memory s"} {
		for _, s := range complete.Commands(cmds, input) {
			fmt.Printf("%q\n", s.Value)
		}
	}
	// Output:
	// "/memory "
	// "/memory show"
}

func ExamplePaths() {
	root, err := os.MkdirTemp("", "workspace-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	for _, f := range []string{"src/main.go", "src/map data.txt"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		log.Fatal(err)
	}
	input := "explain @src/ma"
	tok, _ := complete.AtToken(input, len(input))
	suggestions, err := complete.Paths(context.Background(), ws, tok.Path, complete.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range suggestions {
		line, _ := tok.Replace(input, s)
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "explain @src/main.go "
	// "explain @src/map\\ data.txt "
}
