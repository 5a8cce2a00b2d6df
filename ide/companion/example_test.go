package companion_test

import (
	"fmt"
	"os"

	"github.com/agentry-dev/agentry/ide/companion"
	"github.com/agentry-dev/agentry/ide/idewire"
)

// printEditor stands in for an editor: it prints the diffs it is asked to
// show.
type printEditor struct{}

func (printEditor) OpenDiff(path, content string) error {
	fmt.Printf("show a diff of %s\n", path)
	return nil
}

func (printEditor) CloseDiff(path string) { fmt.Printf("close the diff of %s\n", path) }

// A companion for an editor: it serves MCP on 127.0.0.1, writes its
// discovery file, and sends the editor's context to the CLIs that connect.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "companion-example")
	defer os.RemoveAll(dir)
	srv, err := companion.New(companion.Config{
		Workspace: []string{dir},
		IDEPID:    4242,
		Editor:    printEditor{},
		Dir:       dir + "/gemini/ide", // "" is os.TempDir()/gemini/ide
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.SetContext(idewire.Context{WorkspaceState: &idewire.WorkspaceState{
		OpenFiles: []idewire.File{{Path: dir + "/main.go", Timestamp: 1, IsActive: true}},
	}})
	_, err = os.Stat(srv.File())
	fmt.Println("discovery file written:", err == nil)
	// Output: discovery file written: true
}
