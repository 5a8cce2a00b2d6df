// Package transcript keeps a session's conversation record in gemini-cli's
// ConversationRecord shape: a JSONL file whose first line holds the
// metadata and whose later lines are message records (a record re-appended
// with the same id updates the message in place), metadata updates
// ({"$set": …}, with "messages" as a full checkpoint) and rewinds
// ({"$rewindTo": id}). Appending keeps every write O(1) and a crash can
// cost at most the line being written; Load folds the lines back into one
// record.
package transcript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Message types.
const (
	TypeUser    = "user"
	TypeInfo    = "info"
	TypeError   = "error"
	TypeWarning = "warning"
	TypeGemini  = "gemini"
)

// Record is one conversation: gemini-cli's ConversationRecord.
type Record struct {
	SessionID   string    `json:"sessionId"`
	ProjectHash string    `json:"projectHash"`
	StartTime   string    `json:"startTime,omitempty"`
	LastUpdated string    `json:"lastUpdated,omitempty"`
	Messages    []Message `json:"messages"`
	// Summary is a short description of the conversation.
	Summary string `json:"summary,omitempty"`
	// Directories are the workspace roots of the session.
	Directories []string `json:"directories,omitempty"`
	// Kind is main or subagent.
	Kind string `json:"kind,omitempty"`
}

// Message is one message record. Content and DisplayContent are genai
// part lists (or a plain string) as JSON, kept raw so that a record
// written by gemini-cli round-trips unchanged.
type Message struct {
	ID             string          `json:"id"`
	Timestamp      string          `json:"timestamp"`
	Content        json.RawMessage `json:"content"`
	DisplayContent json.RawMessage `json:"displayContent,omitempty"`
	// Type is user, info, error, warning or gemini.
	Type string `json:"type"`
	// ToolCalls, Thoughts, Tokens and Model belong to gemini messages.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Thoughts  []Thought  `json:"thoughts,omitempty"`
	Tokens    *Tokens    `json:"tokens,omitempty"`
	Model     string     `json:"model,omitempty"`
}

// ToolCall is one tool call of a gemini message.
type ToolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   map[string]any  `json:"args"`
	Result json.RawMessage `json:"result,omitempty"`
	// Status is the scheduler's: success, error, cancelled, …
	Status    string `json:"status"`
	Timestamp string `json:"timestamp"`
	AgentID   string `json:"agentId,omitempty"`
	// DisplayName, Description and ResultDisplay are for a UI.
	DisplayName            string `json:"displayName,omitempty"`
	Description            string `json:"description,omitempty"`
	ResultDisplay          any    `json:"resultDisplay,omitempty"`
	RenderOutputAsMarkdown bool   `json:"renderOutputAsMarkdown,omitempty"`
}

// Thought is a thought summary of a gemini message.
type Thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

// Tokens is a gemini message's token usage.
type Tokens struct {
	Input    int `json:"input"`
	Output   int `json:"output"`
	Cached   int `json:"cached"`
	Thoughts int `json:"thoughts,omitempty"`
	Tool     int `json:"tool,omitempty"`
	Total    int `json:"total"`
}

// Meta is the metadata a $set line may update.
type Meta struct {
	LastUpdated string    `json:"lastUpdated,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Directories []string  `json:"directories,omitempty"`
	Messages    []Message `json:"messages,omitempty"`
}

// Writer appends to one transcript file. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Create starts a new transcript at path with rec's metadata (its
// messages, if any, follow as message lines). The directory is created
// 0700: transcripts hold the user's code and prompts. An existing file is
// an error, so a stored conversation is never overwritten.
func Create(path string, rec Record) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	w := &Writer{f: f, path: path}
	meta := rec
	meta.Messages = nil
	if err := w.line(metaLine(meta)); err != nil {
		f.Close()
		return nil, err
	}
	for _, m := range rec.Messages {
		if err := w.Append(m); err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

// OpenAppend continues an existing transcript, for a resumed session.
func OpenAppend(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return &Writer{f: f, path: path}, nil
}

// Path returns the file the writer appends to.
func (w *Writer) Path() string { return w.path }

// metaLine is the first line: the record without its messages. Messages
// is omitted rather than null, as gemini-cli writes it.
func metaLine(r Record) any {
	type meta struct {
		SessionID   string   `json:"sessionId"`
		ProjectHash string   `json:"projectHash"`
		StartTime   string   `json:"startTime,omitempty"`
		LastUpdated string   `json:"lastUpdated,omitempty"`
		Summary     string   `json:"summary,omitempty"`
		Directories []string `json:"directories,omitempty"`
		Kind        string   `json:"kind,omitempty"`
	}
	return meta{r.SessionID, r.ProjectHash, r.StartTime, r.LastUpdated, r.Summary, r.Directories, r.Kind}
}

// Append writes a message record; a message whose id was written before
// replaces it in place when the transcript is loaded.
func (w *Writer) Append(m Message) error {
	if m.ID == "" {
		return errors.New("transcript: a message needs an id")
	}
	if len(m.Content) == 0 {
		m.Content = json.RawMessage("[]")
	}
	return w.line(m)
}

// Set writes a metadata update; Messages, when set, is a checkpoint that
// replaces every message.
func (w *Writer) Set(m Meta) error {
	return w.line(map[string]Meta{"$set": m})
}

// RewindTo drops the message id and every message after it, as
// gemini-cli's rewindTo does (the named message goes too).
func (w *Writer) RewindTo(id string) error {
	return w.line(map[string]string{"$rewindTo": id})
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

func (w *Writer) line(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("transcript: encode: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// One write per line: O_APPEND makes each land whole after the last.
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("transcript: write %s: %w", w.path, err)
	}
	return nil
}

// ErrNotFound reports a transcript file that does not exist.
var ErrNotFound = errors.New("transcript not found")

// Load folds a transcript file into its record: message lines in first
// appearance order (a repeated id updates in place), $set merged into the
// metadata ($set.messages replaces all messages), $rewindTo dropping the
// named message and everything after it (an unknown id clears every
// message, as gemini-cli does). A line that is not JSON — the torn last
// line of a crash — is skipped.
func Load(path string) (*Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("transcript %s: %w", path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	defer f.Close()
	rec := &Record{}
	var order []string
	byID := map[string]Message{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal(line, &probe) != nil {
			continue
		}
		switch {
		case probe["$rewindTo"] != nil:
			var id string
			if json.Unmarshal(probe["$rewindTo"], &id) != nil {
				continue
			}
			i := indexOf(order, id)
			if i < 0 {
				i = 0
			}
			for _, gone := range order[i:] {
				delete(byID, gone)
			}
			order = order[:i]
		case probe["$set"] != nil:
			var m Meta
			if json.Unmarshal(probe["$set"], &m) != nil {
				continue
			}
			var raw map[string]json.RawMessage
			json.Unmarshal(probe["$set"], &raw)
			if raw["messages"] != nil {
				order, byID = order[:0], map[string]Message{}
				for _, msg := range m.Messages {
					order, byID = put(order, byID, msg)
				}
			}
			if m.LastUpdated != "" {
				rec.LastUpdated = m.LastUpdated
			}
			if m.Summary != "" {
				rec.Summary = m.Summary
			}
			if m.Directories != nil {
				rec.Directories = m.Directories
			}
		case probe["id"] != nil && probe["type"] != nil:
			var msg Message
			if json.Unmarshal(line, &msg) != nil {
				continue
			}
			order, byID = put(order, byID, msg)
		case probe["sessionId"] != nil:
			var meta Record
			if json.Unmarshal(line, &meta) != nil {
				continue
			}
			msgs := meta.Messages
			meta.Messages = nil
			mergeMeta(rec, meta)
			for _, msg := range msgs { // a legacy single-line record
				order, byID = put(order, byID, msg)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	rec.Messages = make([]Message, 0, len(order))
	for _, id := range order {
		rec.Messages = append(rec.Messages, byID[id])
	}
	return rec, nil
}

func put(order []string, byID map[string]Message, m Message) ([]string, map[string]Message) {
	if _, seen := byID[m.ID]; !seen {
		order = append(order, m.ID)
	}
	byID[m.ID] = m
	return order, byID
}

func mergeMeta(rec *Record, m Record) {
	if m.SessionID != "" {
		rec.SessionID = m.SessionID
	}
	if m.ProjectHash != "" {
		rec.ProjectHash = m.ProjectHash
	}
	if m.StartTime != "" {
		rec.StartTime = m.StartTime
	}
	if m.LastUpdated != "" {
		rec.LastUpdated = m.LastUpdated
	}
	if m.Summary != "" {
		rec.Summary = m.Summary
	}
	if m.Directories != nil {
		rec.Directories = m.Directories
	}
	if m.Kind != "" {
		rec.Kind = m.Kind
	}
}

func indexOf(ids []string, id string) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

// FileName is gemini-cli's transcript file name for a session started at
// start: session-<YYYY-MM-DDTHH-MM>-<first 8 characters of the id>.jsonl,
// in UTC as gemini-cli's toISOString is.
func FileName(start time.Time, sessionID string) string {
	id := sessionID
	if len(id) > 8 {
		id = id[:8]
	}
	return "session-" + start.UTC().Format("2006-01-02T15-04") + "-" + id + ".jsonl"
}

// ProjectHash is gemini-cli's project hash: the hex SHA-256 of the project
// root's path.
func ProjectHash(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:])
}
