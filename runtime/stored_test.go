package runtime

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/sessions"
)

// TestLoadSession: a stored session's listing fields, its transcript path
// and its history as a reader sees it — thoughts and empty parts left
// out, each model message with the model that answered it — for
// agentry's store and for any other session service.
func TestLoadSession(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	services := map[string]func(t *testing.T) SessionStore{
		"memory": func(t *testing.T) SessionStore { return session.InMemoryService() },
		"sqlite": func(t *testing.T) SessionStore {
			st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "s.db"), sessions.WithClock(func() time.Time { return at }))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range services {
		t.Run(name, func(t *testing.T) {
			svc := open(t)
			state := map[string]any{StateWorkspace: "/ws", StateTranscript: "/home/chats/s1.json"}
			resp, err := svc.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: userID, SessionID: "s1", State: state})
			if err != nil {
				t.Fatal(err)
			}
			appendEv := func(author string, meta map[string]any, c *genai.Content) {
				t.Helper()
				ev := session.NewEvent(t.Context(), "inv")
				ev.Author, ev.Timestamp = author, at
				ev.LLMResponse = model.LLMResponse{Content: c, CustomMetadata: meta}
				if err := svc.AppendEvent(t.Context(), resp.Session, ev); err != nil {
					t.Fatal(err)
				}
			}
			appendEv("user", nil, genai.NewContentFromText("list the files", genai.RoleUser))
			appendEv("agentry", map[string]any{metaModel: "gemini-2.5-pro"}, &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "thinking it over", Thought: true},
				{Text: "Listing them."},
				{FunctionCall: &genai.FunctionCall{Name: "ls", Args: map[string]any{"path": "."}}},
				{},
			}})
			appendEv("agentry", nil, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{FunctionResponse: &genai.FunctionResponse{Name: "ls", Response: map[string]any{"output": "a.go"}}},
			}})
			appendEv("agentry", nil, nil) // a state-only event
			appendEv("agentry", nil, genai.NewContentFromText("One file: a.go.", genai.RoleModel))

			got, err := LoadSession(t.Context(), svc, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "s1" || got.Workspace != "/ws" || got.Transcript != "/home/chats/s1.json" || got.Turns != 1 || got.FirstPrompt != "list the files" {
				t.Errorf("LoadSession = %+v, want s1 in /ws with its transcript, 1 turn, first prompt %q", got.StoredSession, "list the files")
			}
			want := []StoredMessage{
				{Role: "user", Parts: []StoredPart{{Kind: StoredText, Text: "list the files"}}},
				{Role: "model", Model: "gemini-2.5-pro", Parts: []StoredPart{
					{Kind: StoredText, Text: "Listing them."},
					{Kind: StoredCall, Name: "ls", Args: map[string]any{"path": "."}},
				}},
				{Role: "user", Parts: []StoredPart{{Kind: StoredResult, Name: "ls"}}},
				{Role: "model", Parts: []StoredPart{{Kind: StoredText, Text: "One file: a.go."}}},
			}
			if d := cmp.Diff(want, got.Messages); d != "" {
				t.Errorf("LoadSession messages (-want +got):\n%s", d)
			}

			list, err := ListSessions(t.Context(), svc, "/ws")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]StoredSession{got.StoredSession}, list); d != "" {
				t.Errorf("ListSessions differs from the loaded session's listing (-want +got):\n%s", d)
			}

			if _, err := LoadSession(t.Context(), svc, "missing"); !errors.Is(err, ErrNoSession) {
				t.Errorf("LoadSession(missing) = %v, want ErrNoSession", err)
			}
		})
	}
}
