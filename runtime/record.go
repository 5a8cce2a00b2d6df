package runtime

import (
	"log/slog"
	"time"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/plugins/recorder"
)

// TranscriptConfig turns on the session's transcript: gemini-cli's
// ConversationRecord, one JSONL file per session (recorder.Config).
type TranscriptConfig = recorder.Config

// Recorder keeps a session's transcript in step with its ADK events
// (recorder.Recorder). A session closes the recorder it opened itself; one
// handed to it (Config.Recorder) is its opener's to close.
type Recorder = recorder.Recorder

// transcriptRecorder is what the session tells its transcript: the
// prompt with its display text, warnings and errors, the events it stores
// (synthetic responses of cancelled calls among them) and rewinds — none
// of which an ADK callback sees as the session does.
type transcriptRecorder interface {
	User(content *genai.Content, display string)
	Note(typ, text string)
	Event(ev *session.Event)
	Rewound()
}

// OpenRecorder opens cfg's transcript for sessionID: continues an existing
// file or creates it. Responses are recorded with the model that answered
// them (AnsweredBy), else model's.
func OpenRecorder(cfg TranscriptConfig, sessionID string, now func() time.Time, newID, model func() string, log *slog.Logger) (*Recorder, error) {
	return recorder.Open(cfg, sessionID, recorder.Options{Now: now, NewID: newID, Model: model, AnsweredBy: AnsweredBy, Logger: log})
}

// TranscriptPath is where a session's transcript lives: gemini-cli's
// chats directory under the project's temporary directory.
func TranscriptPath(tempDir string, start time.Time, sessionID string) string {
	return recorder.Path(tempDir, start, sessionID)
}

// SubagentTranscriptPath is where a subagent's child session records its
// transcript: beside its parent's, in a directory named after the parent,
// as gemini-cli keeps chats/<parentSessionId>/<sessionId>.jsonl.
func SubagentTranscriptPath(tempDir, parentID, sessionID string) string {
	return recorder.SubagentPath(tempDir, parentID, sessionID)
}
