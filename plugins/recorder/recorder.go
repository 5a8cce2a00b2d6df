// Package recorder keeps a session's transcript: gemini-cli's
// ConversationRecord, one JSONL file per session, in step with the
// session's ADK events. The session calls it explicitly for what it alone
// sees — the prompt with its display text, warnings and errors, stored
// events (including the synthetic responses of cancelled calls), rewinds —
// and masking's persist hook calls Masked.
package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/transcript"
)

// Config turns on a session's transcript: gemini-cli's
// ConversationRecord, one JSONL file per session.
type Config struct {
	// Path is the transcript file. An existing file (a resumed session) is
	// continued; a missing one is created with the metadata below.
	Path string
	// ProjectHash and Directories go into a new file's metadata.
	ProjectHash string
	Directories []string
	// Kind is the new file's kind: "main" (the default) or "subagent".
	Kind string
}

// Recorder keeps a session's transcript in step with its ADK events, as
// gemini-cli's ChatRecordingService does with its chat: a user message per
// prompt, a gemini message per model response (its text, thoughts, token
// usage and model), tool calls added to the gemini message that made them
// once their responses arrive, and results replaced when masking replaces
// them. Messages are appended whole; an updated message is appended again
// with the same id, which Load folds in place.
type Recorder struct {
	w          *transcript.Writer
	now        func() time.Time
	newID      func() string
	model      func() string
	answeredBy func(*session.Event) string
	log        *slog.Logger

	mu sync.Mutex
	// byCall maps a call id to the gemini message holding the call, for
	// the response and for masking. calls maps a call id to the call the
	// model made, until its response arrives.
	byCall map[string]*transcript.Message
	calls  map[string]*genai.FunctionCall
	// loaded says byCall holds the calls of messages written before this
	// process (a resumed session); they are read from the file only when
	// masking needs one.
	loaded bool
	// failed stops recording after a write error, reported once.
	failed bool
}

// Options are a recorder's clock, ids and model sources.
type Options struct {
	// Now stamps messages; default time.Now.
	Now func() time.Time
	// NewID names messages that carry no event id; required.
	NewID func() string
	// Model is the session's active model, recorded on a response whose
	// event does not name the model that answered; required.
	Model func() string
	// AnsweredBy returns the model that produced a stored model response,
	// or "" when the event does not say; nil means it never says.
	AnsweredBy func(*session.Event) string
	// Logger receives the recorder's warnings; default slog.Default().
	Logger *slog.Logger
}

// ErrOptions is returned by Open when a required option is missing.
var ErrOptions = errors.New("recorder: NewID and Model are required")

// Open opens cfg's transcript for sessionID: continues an existing file
// or creates it.
func Open(cfg Config, sessionID string, opts Options) (*Recorder, error) {
	if opts.NewID == nil || opts.Model == nil {
		return nil, ErrOptions
	}
	now, log, answeredBy := opts.Now, opts.Logger, opts.AnsweredBy
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	if answeredBy == nil {
		answeredBy = func(*session.Event) string { return "" }
	}
	w, err := transcript.OpenAppend(cfg.Path)
	fresh := errors.Is(err, fs.ErrNotExist)
	if fresh {
		start := now().UTC().Format(time.RFC3339Nano)
		kind := cfg.Kind
		if kind == "" {
			kind = "main"
		}
		w, err = transcript.Create(cfg.Path, transcript.Record{
			SessionID: sessionID, ProjectHash: cfg.ProjectHash, StartTime: start, LastUpdated: start,
			Directories: cfg.Directories, Kind: kind,
		})
	}
	if err != nil {
		return nil, err
	}
	return &Recorder{
		w: w, now: now, newID: opts.NewID, model: opts.Model, answeredBy: answeredBy, log: log,
		byCall: map[string]*transcript.Message{}, calls: map[string]*genai.FunctionCall{},
		loaded: fresh,
	}, nil
}

func (r *Recorder) timestamp() string { return r.now().UTC().Format(time.RFC3339Nano) }

// write appends m; the first failure is logged and ends recording, so a
// full disk never fails the run.
func (r *Recorder) write(m transcript.Message) {
	if r.failed {
		return
	}
	if err := r.w.Append(m); err != nil {
		r.failed = true
		r.log.Warn("transcript: recording stopped", "path", r.w.Path(), "err", err)
	}
}

// User records a prompt and, when it differs, the text the user typed.
func (r *Recorder) User(content *genai.Content, display string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := transcript.Message{ID: r.newID(), Timestamp: r.timestamp(), Type: transcript.TypeUser, Content: partsJSON(content.Parts)}
	if display != "" {
		m.DisplayContent = partsJSON([]*genai.Part{{Text: display}})
	}
	r.write(m)
}

// Note records an info, warning or error message (typ is one of
// transcript's message types).
func (r *Recorder) Note(typ, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.write(transcript.Message{ID: r.newID(), Timestamp: r.timestamp(), Type: typ, Content: partsJSON([]*genai.Part{{Text: text}})})
}

// Event records an ADK event the session stored: a model response, or
// function responses. Partial events and events without content are
// ignored.
func (r *Recorder) Event(ev *session.Event) {
	if ev == nil || ev.Partial || ev.Content == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Content.Role == genai.RoleModel {
		r.response(ev)
		return
	}
	touched := map[*transcript.Message]bool{}
	var order []*transcript.Message
	for _, p := range ev.Content.Parts {
		if p == nil || p.FunctionResponse == nil {
			continue
		}
		fr := p.FunctionResponse
		m := r.byCall[fr.ID]
		call := r.calls[fr.ID]
		if m == nil || call == nil {
			continue
		}
		delete(r.calls, fr.ID)
		m.ToolCalls = append(m.ToolCalls, transcript.ToolCall{
			ID: fr.ID, Name: fr.Name, Args: call.Args, Result: partsJSON([]*genai.Part{{FunctionResponse: fr}}),
			Status: toolStatus(fr.Response), Timestamp: r.timestamp(),
		})
		if !touched[m] {
			touched[m] = true
			order = append(order, m)
		}
	}
	for _, m := range order {
		r.write(*m)
	}
}

// response records a model response as a gemini message.
func (r *Recorder) response(ev *session.Event) {
	// The model that answered, as the dispatcher stamped it on the
	// response; the session's active model when it is not there.
	m := &transcript.Message{ID: ev.ID, Timestamp: r.timestamp(), Type: transcript.TypeGemini, Model: r.answeredBy(ev)}
	if m.Model == "" {
		m.Model = r.model()
	}
	if m.ID == "" {
		m.ID = r.newID()
	}
	var text []*genai.Part
	for _, p := range ev.Content.Parts {
		switch {
		case p == nil:
		case p.Thought && p.Text != "":
			subject, desc := parseThought(p.Text)
			m.Thoughts = append(m.Thoughts, transcript.Thought{Subject: subject, Description: desc, Timestamp: m.Timestamp})
		case p.Text != "":
			text = append(text, &genai.Part{Text: p.Text})
		case p.FunctionCall != nil:
			r.byCall[p.FunctionCall.ID] = m
			r.calls[p.FunctionCall.ID] = p.FunctionCall
		}
	}
	m.Content = partsJSON(text)
	if u := ev.UsageMetadata; u != nil {
		m.Tokens = &transcript.Tokens{
			Input: int(u.PromptTokenCount), Output: int(u.CandidatesTokenCount), Cached: int(u.CachedContentTokenCount),
			Thoughts: int(u.ThoughtsTokenCount), Tool: int(u.ToolUsePromptTokenCount), Total: int(u.TotalTokenCount),
		}
	}
	r.write(*m)
}

// Masked replaces the results of masked calls, as gemini-cli's
// updateMessagesFromHistory syncs masking into its record.
func (r *Recorder) Masked(masked []masking.Masked) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		r.loadCalls()
	}
	touched := map[*transcript.Message]bool{}
	var order []*transcript.Message
	for _, mk := range masked {
		m := r.byCall[mk.CallID]
		if m == nil {
			continue
		}
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			if tc.ID != mk.CallID {
				continue
			}
			tc.Result = partsJSON([]*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: tc.ID, Name: tc.Name, Response: mk.Response}}})
			if !touched[m] {
				touched[m] = true
				order = append(order, m)
			}
		}
	}
	for _, m := range order {
		r.write(*m)
	}
}

// loadCalls indexes the tool calls of the messages already in the file.
func (r *Recorder) loadCalls() {
	r.loaded = true
	rec, err := transcript.Load(r.w.Path())
	if err != nil {
		r.log.Warn("transcript: cannot read the earlier messages; their tool results stay unmasked", "path", r.w.Path(), "err", err)
		return
	}
	for i := range rec.Messages {
		m := &rec.Messages[i]
		for _, tc := range m.ToolCalls {
			if _, ok := r.byCall[tc.ID]; !ok {
				r.byCall[tc.ID] = m
			}
		}
	}
}

// Rewound forgets what the recorder knew of messages that a rewind
// dropped.
func (r *Recorder) Rewound() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byCall = map[string]*transcript.Message{}
	r.calls = map[string]*genai.FunctionCall{}
	r.loaded = false
}

// Close closes the transcript file.
func (r *Recorder) Close() error { return r.w.Close() }

// toolStatus is the status gemini-cli records for a call: error when the
// response carries one, cancelled when it was cut off, else success.
func toolStatus(resp map[string]any) string {
	e, ok := resp["error"]
	if !ok {
		return "success"
	}
	if s, _ := e.(string); strings.HasPrefix(s, "[Operation Cancelled]") {
		return "cancelled"
	}
	return "error"
}

// parseThought is gemini-cli's parseThought: a leading **subject** and the
// rest as its description.
func parseThought(text string) (subject, description string) {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "**"); ok {
		if i := strings.Index(rest, "**"); i >= 0 {
			return strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+2:])
		}
	}
	return "", t
}

// partsJSON encodes parts as gemini-cli's PartListUnion array.
func partsJSON(parts []*genai.Part) json.RawMessage {
	if len(parts) == 0 {
		return json.RawMessage("[]")
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("[{%q:%q}]", "text", "unencodable content: "+err.Error()))
	}
	return b
}

// Path is where a session's transcript lives: gemini-cli's
// chats directory under the project's temporary directory.
func Path(tempDir string, start time.Time, sessionID string) string {
	return tempDir + string(os.PathSeparator) + "chats" + string(os.PathSeparator) + transcript.FileName(start, sessionID)
}

// SubagentPath is where a subagent's child session records its
// transcript: beside its parent's, in a directory named after the parent,
// as gemini-cli keeps chats/<parentSessionId>/<sessionId>.jsonl.
func SubagentPath(tempDir, parentID, sessionID string) string {
	return filepath.Join(tempDir, "chats", parentID, sessionID+".jsonl")
}
