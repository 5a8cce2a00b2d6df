package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/config"
)

// hangLimit only fails a Load that never returns: a FIFO opened for
// reading without O_NONBLOCK waits for a writer forever.
const hangLimit = 60 * time.Second

// hostile makes path one of the files an untrusted workspace may hold to
// hang or exhaust a reader: a FIFO, a symlink to /dev/zero, a symlink to a
// file outside (which sets a model, so that following it would show), or a
// settings file of more than 1 MiB.
func hostile(t *testing.T, kind, path, outside string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "devzero":
		err = os.Symlink("/dev/zero", path)
	case "outside":
		err = os.Symlink(outside, path)
	case "large":
		err = os.WriteFile(path, []byte(`{"model": {"name": "large-model"}}`+strings.Repeat(" ", 1<<20)), 0o644)
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// loadWithin runs Load and fails the test if it does not return.
func loadWithin(t *testing.T, opts config.LoadOptions) (*config.Settings, error) {
	t.Helper()
	type result struct {
		s   *config.Settings
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := config.Load(opts)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-time.After(hangLimit):
		t.Fatalf("Load did not return in %v: it is blocked on a file", hangLimit)
		return nil, nil
	}
}

// reasons are the words an error or a warning uses for each kind.
var reasons = map[string]string{
	"fifo":    "not a regular file",
	"devzero": "outside the workspace",
	"outside": "outside the workspace",
	"large":   "larger than 1 MiB",
}

// TestLoadRefusesHostileWorkspaceFiles puts each hostile kind at each of a
// workspace's settings and .env files. Load returns promptly; an untrusted
// workspace goes on with a warning, a trusted one fails with an error that
// names the file and the reason (exit 52); nothing outside is read.
func TestLoadRefusesHostileWorkspaceFiles(t *testing.T) {
	t.Parallel()
	files := []string{
		filepath.Join(".agentry", "settings.json"),
		filepath.Join(".gemini", "settings.json"),
		".env",
		filepath.Join(".agentry", ".env"),
		filepath.Join(".gemini", ".env"),
	}
	for _, kind := range []string{"fifo", "devzero", "outside", "large"} {
		for _, name := range files {
			for _, trusted := range []bool{false, true} {
				t.Run(kind+"/"+name+"/trusted="+map[bool]string{false: "no", true: "yes"}[trusted], func(t *testing.T) {
					t.Parallel()
					f := newFixture(t)
					outside := filepath.Join(t.TempDir(), "outside")
					write(t, outside, `{"model": {"name": "outside-model"}}`)
					if strings.HasSuffix(name, ".env") {
						write(t, outside, "GEMINI_API_KEY=outside-key\n")
					}
					path := filepath.Join(f.ws, name)
					hostile(t, kind, path, outside)
					e := env{}
					if trusted {
						e["AGENTRY_TRUST_WORKSPACE"] = "true"
					}
					s, err := loadWithin(t, f.options(t, e))
					gemini := filepath.Base(filepath.Dir(path)) == ".gemini" && filepath.Base(path) == "settings.json"
					if trusted && !gemini {
						if !errors.Is(err, config.ErrInvalid) {
							t.Fatalf("Load = %v, want an ErrInvalid error", err)
						}
						if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, reasons[kind]) {
							t.Fatalf("error %q does not name %s and %q", msg, path, reasons[kind])
						}
						return
					}
					if err != nil {
						t.Fatalf("Load = %v, want the file ignored", err)
					}
					if s.Model.Name != config.DefaultModel || s.Credentials.GeminiAPIKey != "" {
						t.Errorf("a refused file was used: model %q, key %q", s.Model.Name, s.Credentials.GeminiAPIKey)
					}
					if gemini && trusted {
						// gemini-cli's file: a warning that says why.
						if !strings.Contains(strings.Join(s.Warnings, "\n"), reasons[kind]) {
							t.Errorf("warnings %q do not say %q", s.Warnings, reasons[kind])
						}
					}
				})
			}
		}
	}
}

// TestLoadRefusesHostileUserFiles puts a FIFO, /dev/zero or an oversized
// file at the user's own settings, trust and .env files: they may be
// symlinks (dotfile managers), but must be regular files of bounded size.
func TestLoadRefusesHostileUserFiles(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "devzero", "large"} {
		for _, name := range []string{
			filepath.Join(".agentry", "settings.json"),
			filepath.Join(".gemini", "trustedFolders.json"),
			".env",
			filepath.Join(".agentry", ".env"),
			filepath.Join(".gemini", ".env"),
			filepath.Join(".gemini", "settings.json"),
		} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t)
				path := filepath.Join(f.userHome, name)
				hostile(t, kind, path, "")
				s, err := loadWithin(t, f.options(t, nil))
				want := map[string]string{"fifo": "not a regular file", "devzero": "not a regular file", "large": "larger than 1 MiB"}[kind]
				if name == filepath.Join(".gemini", "settings.json") {
					// gemini-cli's file is skipped with a warning.
					if err != nil {
						t.Fatalf("Load = %v, want a warning", err)
					}
					if w := strings.Join(s.Warnings, "\n"); !strings.Contains(w, path) || !strings.Contains(w, want) {
						t.Errorf("warnings %q do not name %s and %q", s.Warnings, path, want)
					}
					return
				}
				if !errors.Is(err, config.ErrInvalid) {
					t.Fatalf("Load = %v, want an ErrInvalid error", err)
				}
				if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, want) {
					t.Fatalf("error %q does not name %s and %q", msg, path, want)
				}
			})
		}
	}
}

// TestLoadFollowsUserSymlinks: the user's own settings may be a symlink to
// a regular file anywhere (a dotfile repository).
func TestLoadFollowsUserSymlinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dotfiles := filepath.Join(t.TempDir(), "settings.json")
	write(t, dotfiles, `{"model": {"name": "dotfile-model"}}`)
	if err := os.MkdirAll(f.home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, f.userSettings()); err != nil {
		t.Fatal(err)
	}
	s, err := loadWithin(t, f.options(t, nil))
	if err != nil || s.Model.Name != "dotfile-model" {
		t.Fatalf("Load = %v, %v; want the symlinked settings", s, err)
	}
}
