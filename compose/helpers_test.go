package compose

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/internal/modeltest"
	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/internal/sessiontest"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// The scripted model, tool and session helpers of package sessiontest,
// under the short names this package's tests use.
type (
	turn          = modeltest.Turn
	fixedResolver = modeltest.FixedResolver
	timers        = modeltest.Timers
)

var (
	newScript     = modeltest.NewScript
	textTurn      = modeltest.TextTurn
	callTurn      = modeltest.CallTurn
	fc            = modeltest.FC
	collectStream = sessiontest.CollectStream
	types         = sessiontest.Types
	last          = sessiontest.Last
	find          = sessiontest.Find
	run           = sessiontest.Run
)

// TestAbortRealShellCommand aborts a real shell command whose child keeps
// running: the whole process group is gone afterwards, the call is answered,
// and the next Send on the same session succeeds.
// runningPID waits for a shell command to write its background process's
// pid to file, and checks that the process runs.
func runningPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	proctest.Eventually(t, "the command to start", func() bool {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil && pid > 0
	})
	if !proctest.Running(pid) {
		t.Fatalf("sleep %d is not running", pid)
	}
	return pid
}

// summarize names each content by its first part: its text, fc:<tool> or
// fr:<tool>.
func summarize(contents []*genai.Content) []string {
	var out []string
	for _, c := range contents {
		p := c.Parts[0]
		switch {
		case p.FunctionCall != nil:
			out = append(out, "fc:"+p.FunctionCall.Name)
		case p.FunctionResponse != nil:
			out = append(out, "fr:"+p.FunctionResponse.Name)
		default:
			out = append(out, p.Text)
		}
	}
	return out
}

// settingsWith returns the default settings with model name and mutations.
func settingsWith(name string, mutate func(*config.Settings)) config.Settings {
	s := config.Defaults()
	s.Model.Name = name
	if mutate != nil {
		mutate(&s)
	}
	return s
}

// silentChain is a user chain pro → flash whose fallbacks never ask.
func silentChain(s *config.Settings) {
	silent := map[string]string{"terminal": "silent", "transient": "silent", "not_found": "silent", "unknown": "silent"}
	s.Model.FallbackChains = [][]config.ModelPolicySettings{{
		{Model: "gemini-2.5-pro", Actions: silent},
		{Model: "gemini-2.5-flash", Actions: silent, LastResort: true},
	}}
}

// childTestSettings is s with a fresh workspace and home and the
// in-memory store, for sessions built from settings.
func childTestSettings(t *testing.T, s config.Settings) config.Settings {
	s.Workspace = t.TempDir()
	s.Home = filepath.Join(t.TempDir(), ".agentry")
	s.Session.Store = config.SessionStoreMemory
	return s
}

func readerDef(maxTurns int) agents.Definition {
	return agents.Definition{Name: "reader", Kind: agents.KindLocal, Description: "Reads files.",
		SystemPrompt: "You read files.", Tools: []string{"read"}, MaxTurns: maxTurns}
}

// fixedHistory is a session store whose every Get returns the same base
// history, so each benchmark iteration's model call sees exactly n events.
type fixedHistory struct{ base []*session.Event }

type fixedSession struct {
	id     string
	events []*session.Event
	state  map[string]any
}

func (s *fixedSession) ID() string { return s.id }

func (s *fixedSession) AppName() string { return "agentry" }

func (s *fixedSession) UserID() string { return "user" }

func (s *fixedSession) State() session.State { return mapState(s.state) }

func (s *fixedSession) Events() session.Events { return eventList(s.events) }

func (s *fixedSession) LastUpdateTime() time.Time { return time.Time{} }

type mapState map[string]any

func (m mapState) Get(k string) (any, error) {
	v, ok := m[k]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (m mapState) Set(k string, v any) error { m[k] = v; return nil }

func (m mapState) All() iter.Seq2[string, any] { return maps.All(m) }

func (l eventList) All() iter.Seq[*session.Event] {
	return func(y func(*session.Event) bool) {
		for _, e := range l {
			if !y(e) {
				return
			}
		}
	}
}

func (l eventList) Len() int { return len(l) }

func (l eventList) At(i int) *session.Event { return l[i] }

type eventList []*session.Event

func (f *fixedHistory) get(id string) *fixedSession {
	return &fixedSession{id: id, events: f.base[:len(f.base):len(f.base)], state: map[string]any{}}
}

func (f *fixedHistory) Create(_ context.Context, r *session.CreateRequest) (*session.CreateResponse, error) {
	return &session.CreateResponse{Session: f.get(r.SessionID)}, nil
}

func (f *fixedHistory) Get(_ context.Context, r *session.GetRequest) (*session.GetResponse, error) {
	return &session.GetResponse{Session: f.get(r.SessionID)}, nil
}

func (f *fixedHistory) List(context.Context, *session.ListRequest) (*session.ListResponse, error) {
	return &session.ListResponse{}, nil
}

func (f *fixedHistory) Delete(context.Context, *session.DeleteRequest) error { return nil }

func (f *fixedHistory) AppendEvent(_ context.Context, s session.Session, ev *session.Event) error {
	if ev.Partial {
		return nil
	}
	fs := s.(*fixedSession)
	fs.events = append(fs.events, ev)
	return nil
}

func history(n int) []*session.Event {
	out := make([]*session.Event, n)
	for i := range out {
		role, author := genai.RoleUser, "user"
		if i%2 == 1 {
			role, author = genai.RoleModel, "agentry"
		}
		ev := &session.Event{ID: fmt.Sprint("h", i), InvocationID: fmt.Sprint("inv", i/2), Author: author, Timestamp: time.Unix(int64(i), 0)}
		ev.LLMResponse = model.LLMResponse{Content: genai.NewContentFromText(fmt.Sprintf("message %d with a little text to carry", i), genai.Role(role))}
		out[i] = ev
	}
	return out
}

// instant is a backend that answers at once with a two-chunk stream.
type instant struct {
	chunks []*genai.GenerateContentResponse
}

func (b instant) GenerateContent(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return b.chunks[0], nil
}

func (b instant) GenerateContentStream(context.Context, string, []*genai.Content, *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	return func(yield func(*genai.GenerateContentResponse, error) bool) {
		for _, c := range b.chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

func (b instant) CountTokens(context.Context, string, []*genai.Content, *genai.CountTokensConfig) (*genai.CountTokensResponse, error) {
	return &genai.CountTokensResponse{}, nil
}

// signalling is a backend that answers at once and reports each stream
// call on called.
type signalling struct {
	instant
	called chan struct{}
}

func (b signalling) GenerateContentStream(ctx context.Context, m string, c []*genai.Content, cfg *genai.GenerateContentConfig) iter.Seq2[*genai.GenerateContentResponse, error] {
	b.called <- struct{}{}
	return b.instant.GenerateContentStream(ctx, m, c, cfg)
}
