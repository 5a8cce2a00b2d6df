package runtime

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/sessions"
)

// TestListSessions: the listing every "sessions list" and resume by
// number share, for agentry's store and for any other session service:
// by the start of each session's latest run, oldest first (gemini-cli's
// order: a resumed session moves to the end), with turns and the first
// prompt on one line; sessions holding no conversation, other
// workspaces' and subagents' children are left out.
func TestListSessions(t *testing.T) {
	start := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	services := map[string]func(t *testing.T, now *time.Time) session.Service{
		"memory": func(t *testing.T, _ *time.Time) session.Service { return session.InMemoryService() },
		"sqlite": func(t *testing.T, now *time.Time) session.Service {
			st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "s.db"), sessions.WithClock(func() time.Time { return *now }))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range services {
		t.Run(name, func(t *testing.T) {
			now := start
			svc := open(t, &now)
			add := func(id, ws, parent string, texts ...string) {
				t.Helper()
				state := map[string]any{StateWorkspace: ws}
				if parent != "" {
					state[StateParent] = parent
				}
				resp, err := svc.Create(t.Context(), &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id, State: state})
				if err != nil {
					// Stored already: this is the session resumed.
					got, gerr := svc.Get(t.Context(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
					if gerr != nil {
						t.Fatal(err)
					}
					resp = &session.CreateResponse{Session: got.Session}
				}
				for i, text := range texts {
					author, role := "user", genai.Role(genai.RoleUser)
					if i%2 == 1 {
						author, role = "agentry", genai.RoleModel
					}
					ev := session.NewEvent(t.Context(), "inv")
					ev.Author, ev.Timestamp = author, now
					ev.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText(text, role)}
					if err := svc.AppendEvent(t.Context(), resp.Session, ev); err != nil {
						t.Fatal(err)
					}
					now = now.Add(time.Second)
				}
				now = now.Add(time.Minute)
			}
			// Started in this order, then f-resumed is run again: its
			// latest run is the last to start, so it is listed last.
			add("f-resumed", "/ws", "", "first\n\tprompt  here", "answer")
			add("b-old", "/ws", "", "old one", "answer", "second", "answer")
			add("a-empty", "/ws", "") // its run failed before anything was stored
			add("c-child", "/ws", "b-old", "a task", "done")
			add("d-other", "/elsewhere", "", "elsewhere")
			add("e-new", "/ws", "", "<session_context>\nctx\n</session_context>\nnewest", "answer")
			add("f-resumed", "/ws", "", "once more", "answer")

			got, err := ListSessions(t.Context(), svc, "/ws")
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				ID, FirstPrompt string
				Turns           int
			}
			var rows []row
			for i, s := range got {
				rows = append(rows, row{s.ID, s.FirstPrompt, s.Turns})
				if i > 0 && s.Started.Before(got[i-1].Started) {
					t.Errorf("%s started before %s but is listed after it", s.ID, got[i-1].ID)
				}
			}
			want := []row{{"b-old", "old one", 2}, {"e-new", "newest", 1}, {"f-resumed", "first prompt here", 2}}
			if d := cmp.Diff(want, rows); d != "" {
				t.Errorf("ListSessions(/ws) (-want +got):\n%s", d)
			}
			all, err := ListSessions(t.Context(), svc, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 4 || all[1].ID != "d-other" || all[1].Workspace != "/elsewhere" {
				t.Errorf("ListSessions(all) = %+v", all)
			}
		})
	}
}

// The agentry store is the store that masking, compression and rewind
// rewrite.
var _ RewritableStore = (*sessions.Store)(nil)

// agentry's store lists its sessions in one pass over its database.
var _ summarizer = (*sessions.Store)(nil)
