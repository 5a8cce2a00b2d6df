package prompthist

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func clock() func() time.Time {
	t := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	return func() time.Time { t = t.Add(time.Second); return t }
}

func open(t *testing.T, cfg Config) *History {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = clock()
	}
	h, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func add(t *testing.T, h *History, session string, prompts ...string) {
	t.Helper()
	for _, p := range prompts {
		if err := h.Add(session, p); err != nil {
			t.Fatal(err)
		}
	}
}

func readLines(t *testing.T, path string) []Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var e Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

func TestPersisted(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "tmp", "my-project")
	path := Path(tmp)
	h := open(t, Config{Path: path})
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Open created the directory")
	}
	add(t, h, "s1", "  first <b>&  ", "", " \n ", "second")
	entries := readLines(t, path)
	want := []Entry{
		{SessionID: "s1", Timestamp: "2026-03-01T11:00:01.000Z", Message: "first <b>&"},
		{SessionID: "s1", Timestamp: "2026-03-01T11:00:02.000Z", Message: "second"},
	}
	if !slices.Equal(entries, want) {
		t.Errorf("file holds %+v, want %+v", entries, want)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"first <b>&"`) {
		t.Errorf("HTML characters escaped: %s", b)
	}
	for p, mode := range map[string]os.FileMode{tmp: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), mode, err)
		}
	}
	again := open(t, Config{Path: path})
	if got := again.Prompts(); !slices.Equal(got, []string{"second", "first <b>&"}) {
		t.Errorf("reopened: %q", got)
	}
}

// TestOrder: this terminal's prompts newest first, then the file's as it
// was at Open, consecutive duplicates once — useInputHistoryStore's list.
func TestOrder(t *testing.T) {
	path := Path(t.TempDir())
	other := open(t, Config{Path: path})
	add(t, other, "old", "a", "b", "b", "c")
	h := open(t, Config{Path: path})
	add(t, other, "elsewhere", "later") // another terminal, after Open: not seen
	add(t, h, "new", "c", "d", "c")
	if got, want := h.Prompts(), []string{"c", "d", "c", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Prompts = %q, want %q", got, want)
	}
}

// TestNavigation follows useInputHistory: Up from the draft walks older,
// Down walks back and restores the draft; text edited while browsing is
// kept per entry; Add and Reset start again.
func TestNavigation(t *testing.T) {
	h := open(t, Config{Path: Path(t.TempDir())})
	if _, ok := h.Up("draft"); ok {
		t.Error("Up moved in an empty history")
	}
	add(t, h, "s", "one", "two", "three")
	steps := []struct {
		up      bool
		current string
		want    string
		ok      bool
	}{
		{false, "draft", "", false}, // Down before any Up does nothing
		{true, "draft", "three", true},
		{true, "three", "two", true},
		{true, "two edited", "one", true},
		{true, "one", "", false}, // nothing older
		{false, "one", "two edited", true},
		{false, "two edited", "three", true},
		{false, "three", "draft", true},
		{false, "draft", "", false},
	}
	for i, s := range steps {
		var got string
		var ok bool
		if s.up {
			got, ok = h.Up(s.current)
		} else {
			got, ok = h.Down(s.current)
		}
		if got != s.want || ok != s.ok {
			t.Errorf("step %d: got %q, %v; want %q, %v", i, got, ok, s.want, s.ok)
		}
	}
	h.Up("x")
	h.Up("y")
	add(t, h, "s", "four")
	if got, _ := h.Up("new draft"); got != "four" {
		t.Errorf("after Add, Up = %q", got)
	}
	h.Reset()
	if got, _ := h.Up(""); got != "four" {
		t.Errorf("after Reset, Up = %q", got)
	}
	if got, _ := h.Down("four"); got != "" {
		t.Errorf("Down to a draft that was empty = %q", got)
	}
}

// TestConcurrentAppends: two terminals appending at once lose and corrupt
// nothing.
func TestConcurrentAppends(t *testing.T) {
	path := Path(t.TempDir())
	a := open(t, Config{Path: path})
	b := open(t, Config{Path: path})
	const n = 200
	long := strings.Repeat("z", 64<<10) // beyond a pipe's atomic write, not a file's
	var wg sync.WaitGroup
	for _, x := range []struct {
		h    *History
		name string
	}{{a, "a"}, {b, "b"}} {
		wg.Go(func() {
			for i := range n {
				msg := fmt.Sprintf("%s-%d", x.name, i)
				if i%20 == 0 {
					msg += long
				}
				if err := x.h.Add(x.name, msg); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() { // navigation while appending
			for range n {
				x.h.Up("")
				x.h.Prompts()
			}
		})
	}
	wg.Wait()
	entries := readLines(t, path)
	if len(entries) != 2*n {
		t.Fatalf("%d entries, want %d", len(entries), 2*n)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Message] = true
	}
	for _, name := range []string{"a", "b"} {
		for i := range n {
			msg := fmt.Sprintf("%s-%d", name, i)
			if i%20 == 0 {
				msg += long
			}
			if !seen[msg] {
				t.Errorf("%s lost", msg[:min(len(msg), 10)])
			}
		}
	}
	if got := len(open(t, Config{Path: path}).Prompts()); got != 2*n {
		t.Errorf("reopened with %d prompts", got)
	}
}

func TestCorruptLines(t *testing.T) {
	path := Path(t.TempDir())
	content := `{"sessionId":"s","timestamp":"t","message":"good one"}
not json at all
{"sessionId":"s","message":""}
{"message": 42}

{"sessionId":"s","timestamp":"t","message":"good two"}
{"sessionId":"s","timestamp":"t","mess`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h := open(t, Config{Path: path})
	if got := h.Prompts(); !slices.Equal(got, []string{"good two", "good one"}) {
		t.Errorf("Prompts = %q", got)
	}
	// A line appended after the one cut short parses.
	add(t, h, "s", "after")
	if got := open(t, Config{Path: path}).Prompts(); !slices.Equal(got, []string{"after", "good two", "good one"}) {
		t.Errorf("after an append: %q", got)
	}
}

// TestBounds: at most MaxEntries prompts are kept, and only MaxBytes of
// the file's end is read — a huge file (sparse here, 1 GiB) costs no more.
func TestBounds(t *testing.T) {
	path := Path(t.TempDir())
	w := open(t, Config{Path: path})
	for i := range 30 {
		add(t, w, "s", fmt.Sprintf("p%02d", i))
	}
	h := open(t, Config{Path: path, MaxEntries: 10})
	if got := h.Prompts(); len(got) != 10 || got[0] != "p29" || got[9] != "p20" {
		t.Errorf("MaxEntries 10: %q", got)
	}
	add(t, h, "s", "x1", "x2", "x3")
	if got := h.Prompts(); len(got) != 13 {
		t.Errorf("with this terminal's: %d", len(got))
	}
	// The last three lines and part of the one before (dropped).
	lines := readLines(t, path)
	lineLen, _ := json.Marshal(lines[len(lines)-1])
	maxBytes := int64(3*(len(lineLen)+1) + 10)
	if got := open(t, Config{Path: path, MaxBytes: maxBytes}).Prompts(); !slices.Equal(got, []string{"x3", "x2", "x1"}) {
		t.Errorf("MaxBytes %d: %q", maxBytes, got)
	}

	huge := Path(t.TempDir())
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n{\"sessionId\":\"s\",\"timestamp\":\"t\",\"message\":\"last\"}\n"), 1<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := open(t, Config{Path: huge}).Prompts(); !slices.Equal(got, []string{"last"}) {
		t.Errorf("huge file: %q", got)
	}
	// One line longer than the read: nothing, rather than half a prompt.
	if err := os.WriteFile(huge, []byte(`{"message":"`+strings.Repeat("y", 5000)+"\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := open(t, Config{Path: huge, MaxBytes: 1000}).Prompts(); len(got) != 0 {
		t.Errorf("a line longer than the read gave %d prompts", len(got))
	}
	// A prompt too long to read back is not written.
	add(t, h, "s", strings.Repeat("w", MaxPromptBytes+1))
	if got := readLines(t, path); strings.HasPrefix(got[len(got)-1].Message, "w") {
		t.Error("an oversized prompt was written")
	}
	if got, _ := h.Up(""); !strings.HasPrefix(got, "www") {
		t.Error("an oversized prompt is missing from this terminal's history")
	}
}

// TestNotRegular: a FIFO or a directory in the file's place is refused
// without blocking.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir} {
		if _, err := Open(Config{Path: p}); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s): %v", p, err)
		}
	}
	h := open(t, Config{Path: filepath.Join(dir, "ok")})
	h.cfg.Path = fifo
	if err := h.Add("s", "x"); err == nil { // ENXIO: a FIFO nobody reads
		t.Error("Add wrote to a FIFO")
	}
	h.cfg.Path = dir
	if err := h.Add("s", "x"); err == nil {
		t.Error("Add wrote to a directory")
	}
	if _, err := Open(Config{}); err == nil {
		t.Error("Open without a path succeeded")
	}
}
