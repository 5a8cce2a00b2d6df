package ide

import (
	"fmt"
	"io"
	"os"
)

// readDiscoveryFile reads a discovery file: a regular file, not a symbolic
// link, of at most limit bytes. Windows files have no uid, so, as in
// gemini-cli, owner and mode are not checked.
func readDiscoveryFile(path string, _ int, limit int64) ([]byte, string) {
	li, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Sprintf("cannot stat: %v", err)
	}
	if li.Mode()&os.ModeSymlink != 0 {
		return nil, "a symbolic link: not followed"
	}
	if !li.Mode().IsRegular() {
		return nil, "not a regular file"
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Sprintf("cannot open: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Sprintf("cannot read: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Sprintf("larger than %d bytes", limit)
	}
	return data, ""
}

// alive is true on Windows, as in gemini-cli.
func alive(pid int) bool { return pid > 0 }

// defaultProcesses is none on Windows: the IDE's pid is known only from
// GEMINI_CLI_IDE_PID, and the files are ranked without it.
func defaultProcesses() ProcessLookup { return nil }

// checkDir trusts every directory: Windows files have no uid or mode
// bits to check.
func checkDir(string, int) string { return "" }
