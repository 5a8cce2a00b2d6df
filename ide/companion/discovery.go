package companion

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// writeDiscovery writes d as dir/name atomically (a temporary file, synced,
// renamed) with mode 0600, creating dir (and its parent) 0700 when missing.
// It refuses a directory that another user owns or others may write to:
// whoever controls it could swap the file a client reads.
func writeDiscovery(dir, name string, d idewire.Discovery) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("companion: create the discovery directory: %w", err)
	}
	// The directory and its parent (os.TempDir()/gemini): the parent's
	// owner could rename the directory away and put another in its place.
	for _, p := range []string{filepath.Dir(dir), dir} {
		if err := checkDir(p); err != nil {
			return "", fmt.Errorf("companion: the discovery directory %s: %w; remove it (or let its owner fix it) and start again", p, err)
		}
	}
	body, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("companion: encode the discovery file: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	if _, err := f.Write(body); err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	path := filepath.Join(dir, name)
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("companion: write the discovery file: %w", err)
	}
	ok = true
	return path, nil
}

// errUnsafeDir is why a discovery directory is refused.
var errUnsafeDir = errors.New("unsafe directory")
