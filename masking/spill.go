//go:build !unix

package masking

import (
	"fmt"
	"os"
)

// writeFile writes data to path, replacing any earlier content: names are
// deterministic, so a second write of the same output yields the same
// file. The file is private to the user, as tool output may hold secrets.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("masking: spill tool output: %w", err)
	}
	return nil
}
