package safefs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// A workspace's ignore file is read confined to the workspace and bounded;
// a symlink that leads out of it is refused.
func ExampleReadFileIn() {
	ws, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(ws)
	os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.log\n"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(ws, ".geminiignore"))

	b, err := safefs.ReadFileIn(ws, ".gitignore", 1<<20)
	fmt.Printf("%q %v\n", b, err)
	_, err = safefs.ReadFileIn(ws, ".geminiignore", 1<<20)
	fmt.Println(errors.Is(err, safefs.ErrEscapes))
	// Output:
	// "*.log\n" <nil>
	// true
}
