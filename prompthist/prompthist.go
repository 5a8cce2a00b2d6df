// Package prompthist is the interactive terminal's prompt history,
// persisted per workspace: every submitted prompt is appended as one JSON
// line to a file in the workspace's temporary directory, and the input
// box walks it with Up and Down as gemini-cli's useInputHistoryStore and
// useInputHistory do — this terminal's prompts newest first, then the
// prompts on file when it opened, consecutive duplicates shown once.
//
// Appends are single O_APPEND writes, so terminals sharing a workspace
// do not corrupt each other's lines; reading takes only the end of the
// file, so a huge or hostile file costs a bounded read; lines that do not
// parse are skipped.
package prompthist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FileName is the history file's name in the workspace's temporary
// directory.
const FileName = "prompts.jsonl"

// Defaults of Config.
const (
	// DefaultMaxEntries is how many prompts are kept from the file, and
	// from this terminal.
	DefaultMaxEntries = 1000
	// DefaultMaxBytes is how much of the file's end is read.
	DefaultMaxBytes = 4 << 20
)

// MaxPromptBytes bounds what is written to the file: a longer prompt is
// kept for this terminal's Up and Down but not persisted, since a reader
// of the file's end could never get it back whole.
const MaxPromptBytes = 1 << 20

// ErrNotRegular is the error for a history path that names something
// other than a regular file (a directory, a FIFO, a device).
var ErrNotRegular = errors.New("prompthist: not a regular file")

// Path returns the history file of a workspace whose temporary directory
// is tempDir (config's Settings.TempDir, where the transcripts live too).
func Path(tempDir string) string { return filepath.Join(tempDir, FileName) }

// Config configures Open.
type Config struct {
	// Path is the history file (see Path). Required. Open does not create
	// it or its directory; the first Add does (0700 directory, 0600
	// file).
	Path string
	// MaxEntries bounds the prompts kept from the file and from this
	// terminal; zero is DefaultMaxEntries.
	MaxEntries int
	// MaxBytes bounds how much of the file's end Open reads; zero is
	// DefaultMaxBytes.
	MaxBytes int64
	// Now is the clock for entries' timestamps; nil is time.Now.
	Now func() time.Time
}

// Entry is one line of the history file, the fields of gemini-cli's
// prompt log entries.
type Entry struct {
	SessionID string `json:"sessionId"`
	// Timestamp is when the prompt was submitted, in JavaScript's
	// toISOString form.
	Timestamp string `json:"timestamp"`
	Message   string `json:"message"`
}

// History is one terminal's view of a workspace's prompt history. It is
// safe for concurrent use.
type History struct {
	cfg Config

	mu      sync.Mutex
	past    []string // on file at Open, newest first
	current []string // added through this History, oldest first
	list    []string // the combined list, newest first; nil when stale

	// Navigation, as useInputHistory keeps it: index -1 is the prompt
	// being composed; edits made while browsing are kept per index.
	index int
	edits map[int]string
}

// Open reads the end of the history file at cfg.Path. A missing file is
// an empty history.
func Open(cfg Config) (*History, error) {
	if cfg.Path == "" {
		return nil, errors.New("prompthist: no path")
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &History{cfg: cfg, index: -1}
	entries, err := readTail(cfg.Path, cfg.MaxBytes, cfg.MaxEntries)
	if err != nil {
		return nil, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		h.past = append(h.past, entries[i].Message)
	}
	return h, nil
}

// Add records a submitted prompt, trimmed, for sessionID: in this
// terminal's history at once, and in the file. An empty prompt is not
// recorded. Navigation starts again from the prompt being composed. The
// error is the file's: the prompt is in this terminal's history anyway.
func (h *History) Add(sessionID, prompt string) error {
	prompt = strings.TrimSpace(prompt)
	if prompt == "" {
		return nil
	}
	h.mu.Lock()
	h.current = append(h.current, prompt)
	if n := len(h.current); n > h.cfg.MaxEntries {
		h.current = append([]string(nil), h.current[n-h.cfg.MaxEntries:]...)
	}
	h.list = nil
	h.reset()
	ts := h.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	h.mu.Unlock()

	if len(prompt) > MaxPromptBytes {
		return nil
	}
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	if err := enc.Encode(Entry{SessionID: sessionID, Timestamp: ts, Message: prompt}); err != nil {
		return fmt.Errorf("prompthist: %w", err)
	}
	return appendLine(h.cfg.Path, line.Bytes())
}

// Prompts returns the history as Up walks it: this terminal's prompts
// newest first, then those on file when it opened, newest first, with
// consecutive duplicates once.
func (h *History) Prompts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.prompts()...)
}

func (h *History) prompts() []string {
	if h.list != nil {
		return h.list
	}
	list := make([]string, 0, len(h.current)+len(h.past))
	add := func(s string) {
		if len(list) == 0 || list[len(list)-1] != s {
			list = append(list, s)
		}
	}
	for i := len(h.current) - 1; i >= 0; i-- {
		add(h.current[i])
	}
	for _, s := range h.past {
		add(s)
	}
	h.list = list
	return list
}

// Up moves to the next older prompt. current is the input box's text,
// kept for when navigation comes back to where it is now. It returns the
// text to show, and false when there is nothing older (the box is left as
// it is).
func (h *History) Up(current string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.index >= len(h.prompts())-1 {
		return "", false
	}
	return h.moveTo(h.index+1, current), true
}

// Down moves to the next newer prompt, and from the newest back to the
// prompt that was being composed. It returns false when navigation is not
// under way.
func (h *History) Down(current string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.index < 0 {
		return "", false
	}
	return h.moveTo(h.index-1, current), true
}

// Reset ends navigation: the next Up starts from the newest prompt, and
// edits made while browsing are forgotten. Add resets too.
func (h *History) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reset()
}

func (h *History) reset() {
	h.index = -1
	h.edits = nil
}

// moveTo keeps current as the text at the present index and returns the
// text at next: the text left there before, else the prompt.
func (h *History) moveTo(next int, current string) string {
	if h.edits == nil {
		h.edits = map[int]string{}
	}
	h.edits[h.index] = current
	h.index = next
	if s, ok := h.edits[next]; ok {
		return s
	}
	if next < 0 {
		return ""
	}
	return h.prompts()[next]
}

// openFlags never block on a FIFO and never leak the descriptor.
const openFlags = syscall.O_NONBLOCK | syscall.O_CLOEXEC

// readTail returns the valid entries in the last maxBytes of the file at
// path, at most maxEntries of them, oldest first.
func readTail(path string, maxBytes int64, maxEntries int) ([]Entry, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("prompthist: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("prompthist: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	off := max(0, fi.Size()-maxBytes)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) { // a file that shrank reads short
		return nil, fmt.Errorf("prompthist: %w", err)
	}
	buf = buf[:n]
	if off > 0 {
		// The read starts inside a line, unless a line ended just before.
		if nl := bytes.IndexByte(buf, '\n'); nl >= 0 {
			buf = buf[nl+1:]
		} else {
			buf = nil
		}
	}
	var entries []Entry
	for line := range bytes.Lines(buf) {
		if e, ok := parseLine(line); ok {
			entries = append(entries, e)
		}
	}
	if len(entries) > maxEntries {
		entries = entries[len(entries)-maxEntries:]
	}
	return entries, nil
}

// entryStart is how every line Add writes begins. It cannot occur inside
// a JSON string, whose quotes are escaped.
var entryStart = []byte(`{"sessionId":`)

// parseLine parses one line of the file. A line that does not parse is
// skipped, unless it ends with a whole entry: a writer that died mid-line
// leaves no newline, and the next entry is appended to its fragment.
func parseLine(line []byte) (Entry, bool) {
	var e Entry
	err := json.Unmarshal(line, &e)
	if err != nil {
		i := bytes.LastIndex(line, entryStart)
		if i <= 0 {
			return Entry{}, false
		}
		e = Entry{}
		err = json.Unmarshal(line[i:], &e)
	}
	return e, err == nil && strings.TrimSpace(e.Message) != ""
}

// appendLine appends line (which ends in a newline) to the file at path
// in one write, creating the file (0600) and its directory (0700).
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("prompthist: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return fmt.Errorf("prompthist: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("prompthist: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("prompthist: %w", err)
	}
	return nil
}
