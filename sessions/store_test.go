package sessions

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
)

const (
	testApp  = "agentry"
	testUser = "user1"
)

func create(t testing.TB, s *Store, id string, state map[string]any) session.Session {
	t.Helper()
	resp, err := s.Create(context.Background(), &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: id, State: state})
	if err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
	return resp.Session
}

func get(t testing.TB, s *Store, id string) session.Session {
	t.Helper()
	return getReq(t, s, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id})
}

func getReq(t testing.TB, s *Store, req *session.GetRequest) session.Session {
	t.Helper()
	resp, err := s.Get(context.Background(), req)
	if err != nil {
		t.Fatalf("Get(%s): %v", req.SessionID, err)
	}
	return resp.Session
}

func appendEv(t testing.TB, s *Store, sess session.Session, ev *session.Event) {
	t.Helper()
	if err := s.AppendEvent(context.Background(), sess, ev); err != nil {
		t.Fatalf("AppendEvent(%s): %v", ev.ID, err)
	}
}

func textEvent(id, text string) *session.Event {
	return &session.Event{
		ID:           id,
		InvocationID: "inv-1",
		Author:       "model",
		Timestamp:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		LLMResponse:  model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleModel)},
	}
}

func texts(sess session.Session) []string {
	var out []string
	for ev := range sess.Events().All() {
		var b strings.Builder
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				b.WriteString(p.Text)
			}
		}
		out = append(out, b.String())
	}
	return out
}

func stateOf(sess session.Session) map[string]any {
	return maps.Collect(sess.State().All())
}

// TestLiveObject: Create and unfiltered Gets return one object, a change
// to its events persists across Gets, an append to it happens once, and
// filtered Gets are copies.
func TestLiveObject(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		live := create(t, s, "s1", nil)
		if got := get(t, s, "s1"); got != live {
			t.Fatalf("Get returned %p, want the live object %p from Create", got, live)
		}
		ev1 := textEvent("e1", "one")
		appendEv(t, s, live, ev1)
		appendEv(t, s, live, textEvent("e2", "two"))
		if n := live.Events().Len(); n != 2 {
			t.Fatalf("live object has %d events after two appends, want 2", n)
		}
		again := get(t, s, "s1")
		if again != live || again.Events().At(0) != ev1 {
			t.Fatalf("second Get: session %p event %p, want %p and the appended event %p", again, again.Events().At(0), live, ev1)
		}

		// A processor rewrites an event of the live object in place.
		live.Events().At(1).Content = genai.NewContentFromText("two, masked", genai.RoleModel)
		if got := texts(get(t, s, "s1")); !slices.Equal(got, []string{"one", "two, masked"}) {
			t.Errorf("after an in-place change Get shows %q", got)
		}

		// Filtered Gets are copies: their own object and events.
		for _, req := range []*session.GetRequest{
			{AppName: testApp, UserID: testUser, SessionID: "s1", NumRecentEvents: 1},
			{AppName: testApp, UserID: testUser, SessionID: "s1", After: ev1.Timestamp},
		} {
			c := getReq(t, s, req)
			if c == live {
				t.Fatalf("filtered Get %+v returned the live object", req)
			}
			n := c.Events().Len()
			for ev := range c.Events().All() {
				if slices.Contains(slices.Collect(live.Events().All()), ev) {
					t.Errorf("filtered Get shares event %s with the live object", ev.ID)
				}
			}
			c.Events().At(0).Author = "changed in the copy"
			appendEv(t, s, live, textEvent(fmt.Sprintf("x%d", live.Events().Len()), "more"))
			if c.Events().Len() != n {
				t.Errorf("an append to the live object changed a copy")
			}
			for ev := range live.Events().All() {
				if ev.Author == "changed in the copy" {
					t.Errorf("a change to a copy's event reached the live object")
				}
			}
		}
		if got := getReq(t, s, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: "s1", NumRecentEvents: 2}).Events().Len(); got != 2 {
			t.Errorf("NumRecentEvents 2 gave %d events", got)
		}

		// Each append was stored once.
		want := texts(live)
		want[1] = "two" // the in-place change was not written through
		r := b.open(t)
		if got := texts(get(t, r, "s1")); !slices.Equal(got, want) {
			t.Errorf("reopened store has %q, want %q", got, want)
		}
	})
}

// TestAppendToCopy: an append to a copy grows the copy and the live object
// and is stored once, as ADK's services append to the object they are
// given and to the stored session.
func TestAppendToCopy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		live := create(t, s, "s1", nil)
		appendEv(t, s, live, textEvent("e1", "one"))
		cp := getReq(t, s, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: "s1", NumRecentEvents: 5})
		ev := textEvent("e2", "two")
		ev.Actions.StateDelta = map[string]any{"k": "v", "temp:t": 1.0, "app:a": "A"}
		appendEv(t, s, cp, ev)
		if got := texts(cp); !slices.Equal(got, []string{"one", "two"}) {
			t.Errorf("copy has %q", got)
		}
		if got := texts(live); !slices.Equal(got, []string{"one", "two"}) {
			t.Errorf("live object has %q", got)
		}
		if live.Events().At(1) == cp.Events().At(1) {
			t.Errorf("the live object shares the copy's event")
		}
		if st := stateOf(cp); st["k"] != "v" || st["temp:t"] != 1.0 || st["app:a"] != "A" {
			t.Errorf("copy state %v, want the whole delta", st)
		}
		if st := stateOf(live); st["k"] != "v" || st["app:a"] != "A" || st["temp:t"] != nil {
			t.Errorf("live state %v, want k and app:a and no temp key", st)
		}
		// Appending to a copy of a deleted session fails.
		if err := s.Delete(context.Background(), &session.DeleteRequest{AppName: testApp, UserID: testUser, SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendEvent(context.Background(), cp, textEvent("e3", "three")); !errors.Is(err, ErrNotFound) {
			t.Errorf("append to a copy of a deleted session: %v, want ErrNotFound", err)
		}
	})
}

// TestReplaceEventContents: several replacements land together, in the
// live object and in storage; one unknown event id leaves every event as
// it was.
func TestReplaceEventContents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		live := create(t, s, "s1", nil)
		for i := range 4 {
			appendEv(t, s, live, textEvent(fmt.Sprintf("e%d", i), fmt.Sprintf("text %d", i)))
		}
		before := live.Events().At(0)
		bad := map[string]*genai.Content{
			"e1":      genai.NewContentFromText("one", genai.RoleModel),
			"missing": genai.NewContentFromText("none", genai.RoleModel),
		}
		if err := s.ReplaceEventContents(ctx, testApp, testUser, "s1", bad); !errors.Is(err, ErrNotFound) {
			t.Fatalf("ReplaceEventContents with an unknown event = %v, want ErrNotFound", err)
		}
		if got := live.Events().At(1).Content.Parts[0].Text; got != "text 1" {
			t.Errorf("after a refused batch event 1 is %q, want it unchanged", got)
		}
		want := map[string]*genai.Content{
			"e1": genai.NewContentFromText("one", genai.RoleModel),
			"e3": genai.NewContentFromText("three", genai.RoleModel),
		}
		if err := s.ReplaceEventContents(ctx, testApp, testUser, "s1", want); err != nil {
			t.Fatalf("ReplaceEventContents: %v", err)
		}
		if live.Events().At(0) != before {
			t.Errorf("an event outside the batch was replaced")
		}
		for _, st := range []*Store{s, b.open(t)} {
			got := get(t, st, "s1")
			for i, text := range []string{"text 0", "one", "text 2", "three"} {
				if g := got.Events().At(i).Content.Parts[0].Text; g != text {
					t.Errorf("event %d is %q, want %q", i, g, text)
				}
			}
		}
	})
}

// TestReplaceEventContent: the replacement is in the live object at once
// and in storage after a reopen; unknown sessions and events are
// ErrNotFound.
func TestReplaceEventContent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		live := create(t, s, "s1", nil)
		for i := range 3 {
			appendEv(t, s, live, textEvent(fmt.Sprintf("e%d", i), fmt.Sprintf("text %d", i)))
		}
		old := live.Events().At(1)
		masked := &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			ID: "call-1", Name: "run_shell_command", Response: map[string]any{"output": "<tool_output_masked>"},
		}}}}
		if err := s.ReplaceEventContent(ctx, testApp, testUser, "s1", "e1", masked); err != nil {
			t.Fatalf("ReplaceEventContent: %v", err)
		}
		if got := live.Events().At(1); got.Content != masked || got.ID != "e1" {
			t.Errorf("live event 1 is %+v, want the masked content", got)
		}
		if old.Content.Parts[0].Text != "text 1" {
			t.Errorf("the replaced event object was changed")
		}
		if get(t, s, "s1") != live {
			t.Errorf("Get after a replacement is not the live object")
		}

		// Persisted: a new store loads the replacement; and a store
		// that has not loaded the session replaces too.
		r := b.open(t)
		masked2 := genai.NewContentFromText("masked again", genai.RoleModel)
		if err := r.ReplaceEventContent(ctx, testApp, testUser, "s1", "e2", masked2); err != nil {
			t.Fatalf("ReplaceEventContent on an unloaded session: %v", err)
		}
		r2 := b.open(t)
		got := get(t, r2, "s1")
		if d := cmp.Diff(masked, got.Events().At(1).Content); d != "" {
			t.Errorf("reopened event 1 content (-want +got):\n%s", d)
		}
		if d := cmp.Diff(masked2, got.Events().At(2).Content); d != "" {
			t.Errorf("reopened event 2 content (-want +got):\n%s", d)
		}
		if got.Events().At(0).Content.Parts[0].Text != "text 0" {
			t.Errorf("event 0 changed")
		}

		for _, c := range []struct{ sess, ev string }{{"s1", "nope"}, {"nope", "e1"}} {
			err := s.ReplaceEventContent(ctx, testApp, testUser, c.sess, c.ev, masked)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("ReplaceEventContent(%s, %s) = %v, want ErrNotFound", c.sess, c.ev, err)
			}
		}
	})
}

// TestTempState: temp: keys reach only the session object in use, until
// the next unfiltered Get; they are never stored, and the stored event
// lacks them while the caller's event keeps them.
func TestTempState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		live := create(t, s, "s1", map[string]any{"temp:c": "from create", "k0": "v0"})
		ev := textEvent("e1", "one")
		ev.Actions.StateDelta = map[string]any{"temp:k1": "v1", "sk": "v2"}
		appendEv(t, s, live, ev)
		if _, ok := ev.Actions.StateDelta["temp:k1"]; !ok {
			t.Errorf("the caller's event lost its temp key: %v", ev.Actions.StateDelta)
		}
		st := stateOf(live)
		if st["temp:k1"] != "v1" || st["temp:c"] != "from create" || st["sk"] != "v2" {
			t.Errorf("live state during the invocation: %v", st)
		}
		stored := live.Events().At(0)
		if _, ok := stored.Actions.StateDelta["temp:k1"]; ok || stored.Actions.StateDelta["sk"] != "v2" {
			t.Errorf("stored event delta %v, want sk without temp:k1", stored.Actions.StateDelta)
		}
		// Live, for code inside the invocation, keeps them.
		if got, err := s.Live(context.Background(), testApp, testUser, "s1"); err != nil || got != live || stateOf(got)["temp:k1"] != "v1" {
			t.Errorf("Live = %p, %v with state %v; want the live object with its temp keys", got, err, stateOf(live))
		}
		if got := get(t, s, "s1"); got != live {
			t.Fatal("Get is not the live object")
		}
		if st := stateOf(live); st["temp:k1"] != nil || st["temp:c"] != nil || st["sk"] != "v2" || st["k0"] != "v0" {
			t.Errorf("live state after the next Get: %v, want no temp keys", st)
		}

		r := b.open(t)
		got := get(t, r, "s1")
		if st := stateOf(got); len(st) != 2 || st["sk"] != "v2" || st["k0"] != "v0" {
			t.Errorf("reopened state %v, want sk and k0 only", st)
		}
		if d := got.Events().At(0).Actions.StateDelta; len(d) != 1 || d["sk"] != "v2" {
			t.Errorf("reopened event delta %v, want sk only", d)
		}
		var n int
		if err := r.db.QueryRow(`SELECT COUNT(*) FROM events WHERE data LIKE '%temp:%'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("stored events mentioning temp: %d (%v)", n, err)
		}
		if err := r.db.QueryRow(`SELECT COUNT(*) FROM session_state WHERE state_key LIKE 'temp:%'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("stored temp state keys: %d (%v)", n, err)
		}
	})
}

// richEvent uses every field of session.Event with JSON-native values, so
// a JSON round trip must give it back unchanged.
func richEvent() *session.Event {
	return &session.Event{
		ID:             "e-rich",
		Timestamp:      time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.UTC),
		InvocationID:   "inv-7",
		Branch:         "root.sub",
		IsolationScope: "task-1",
		Author:         "coder",
		LLMResponse: model.LLMResponse{
			Content: &genai.Content{Role: "model", Parts: []*genai.Part{
				{Text: "thinking", Thought: true, ThoughtSignature: []byte{1, 2, 3, 250}},
				{Text: "answer"},
				{FunctionCall: &genai.FunctionCall{ID: "call-1", Name: "read_file", Args: map[string]any{"path": "a.go", "limit": 10.0, "opts": map[string]any{"x": []any{"a", true}}}}},
				{FunctionResponse: &genai.FunctionResponse{ID: "call-1", Name: "read_file", Response: map[string]any{"output": "package a\n"}}},
				{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG\r\n")}},
				{ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython}},
				{CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1\n"}},
			}},
			CitationMetadata:  &genai.CitationMetadata{Citations: []*genai.Citation{{Title: "t", URI: "https://example.com", StartIndex: 1, EndIndex: 4}}},
			GroundingMetadata: &genai.GroundingMetadata{WebSearchQueries: []string{"q"}},
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: 100, CandidatesTokenCount: 20, ThoughtsTokenCount: 5, CachedContentTokenCount: 50, TotalTokenCount: 125,
			},
			CustomMetadata:          map[string]any{"routing": map[string]any{"model": "gemini-2.5-pro", "n": 2.0}},
			ModelVersion:            "gemini-2.5-pro-001",
			TurnComplete:            true,
			Interrupted:             true,
			SessionResumptionHandle: "h",
			ErrorCode:               "E",
			ErrorMessage:            "msg",
			FinishReason:            genai.FinishReasonStop,
			AvgLogprobs:             -0.25,
		},
		Actions: session.EventActions{
			StateDelta:                 map[string]any{"k": "v", "n": 3.5, "list": []any{"a", 1.0}, "app:a": "A", "user:u": true},
			ArtifactDelta:              map[string]int64{"file.txt": 2},
			RequestedToolConfirmations: nil,
			SkipSummarization:          true,
			TransferToAgent:            "sub",
			Escalate:                   true,
		},
		LongRunningToolIDs: []string{"call-9"},
		Routes:             []string{"r1", "r2"},
		RequestedInput:     &session.RequestInput{InterruptID: "ask", Message: "name?", Payload: map[string]any{"doc": "x"}},
		Output:             map[string]any{"result": "ok", "score": 0.5},
		NodeInfo:           &session.NodeInfo{Path: "a/b@1", MessageAsOutput: true, OutputFor: []string{"a"}},
	}
}

// TestEventRoundTrip: an event is stored whole and loads back equal.
func TestEventRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		live := create(t, s, "s1", nil)
		appendEv(t, s, live, richEvent())
		got := get(t, b.open(t), "s1")
		if got.Events().Len() != 1 {
			t.Fatalf("reopened session has %d events", got.Events().Len())
		}
		if d := cmp.Diff(richEvent(), got.Events().At(0)); d != "" {
			t.Errorf("event after a round trip through storage (-want +got):\n%s", d)
		}
	})
}

// TestSharedState: app: and user: state is shared by live sessions at
// once and stored without the prefix; user: state stays with its user.
func TestSharedState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		s1 := create(t, s, "s1", map[string]any{"app:theme": "dark"})
		s2 := create(t, s, "s2", nil)
		other, err := s.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: "user2", SessionID: "s3"})
		if err != nil {
			t.Fatal(err)
		}
		ev := textEvent("e1", "x")
		ev.Actions.StateDelta = map[string]any{"app:model": "pro", "user:name": "Ada", "own": 1.0}
		appendEv(t, s, s1, ev)
		if st := stateOf(s2); st["app:model"] != "pro" || st["user:name"] != "Ada" || st["app:theme"] != "dark" || st["own"] != nil {
			t.Errorf("other session of the user sees %v", st)
		}
		if st := stateOf(other.Session); st["app:model"] != "pro" || st["user:name"] != nil {
			t.Errorf("other user's session sees %v", st)
		}
		if v, err := s2.State().Get("user:name"); err != nil || v != "Ada" {
			t.Errorf("State().Get(user:name) = %v, %v", v, err)
		}
		if _, err := s2.State().Get("own"); !errors.Is(err, session.ErrStateKeyNotExist) {
			t.Errorf("State().Get(own) on another session: %v, want ErrStateKeyNotExist", err)
		}

		r := b.open(t)
		if st := stateOf(get(t, r, "s2")); len(st) != 3 || st["app:model"] != "pro" || st["user:name"] != "Ada" || st["app:theme"] != "dark" {
			t.Errorf("reopened s2 state %v", st)
		}
		var raw string
		if err := r.db.QueryRow(`SELECT state_value FROM app_state WHERE app_name = $1 AND state_key = 'model'`, testApp).Scan(&raw); err != nil || raw != `"pro"` {
			t.Errorf("stored app state model = %q, %v", raw, err)
		}
		list, err := r.List(ctx, &session.ListRequest{AppName: testApp})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range list.Sessions {
			ids = append(ids, l.UserID()+"/"+l.ID())
			if l.Events().Len() != 0 {
				t.Errorf("List returned events for %s", l.ID())
			}
		}
		if !slices.Equal(ids, []string{"user1/s1", "user1/s2", "user2/s3"}) {
			t.Errorf("List = %v", ids)
		}
		if st := stateOf(list.Sessions[0]); st["own"] != 1.0 || st["user:name"] != "Ada" || st["app:model"] != "pro" {
			t.Errorf("listed s1 state %v", st)
		}
		if st := stateOf(list.Sessions[2]); st["user:name"] != nil || st["app:model"] != "pro" {
			t.Errorf("listed s3 state %v", st)
		}
	})
}

// TestDeleteAndDuplicates: a deleted session is gone and its live object
// cannot be appended to; ids are unique.
func TestDeleteAndDuplicates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s := b.open(t)
		live := create(t, s, "s1", nil)
		ev := textEvent("e1", "one")
		appendEv(t, s, live, ev)
		if err := s.AppendEvent(ctx, live, ev); !errors.Is(err, ErrExists) {
			t.Errorf("second append of one event: %v, want ErrExists", err)
		}
		if _, err := s.Create(ctx, &session.CreateRequest{AppName: testApp, UserID: testUser, SessionID: "s1"}); !errors.Is(err, ErrExists) {
			t.Errorf("Create of an existing id: %v, want ErrExists", err)
		}
		// A store that has not loaded the session finds the duplicate in
		// storage (List returns copies without loading).
		r := b.open(t)
		list, err := r.List(ctx, &session.ListRequest{AppName: testApp, UserID: testUser})
		if err != nil || len(list.Sessions) != 1 {
			t.Fatalf("List: %v, %v", list, err)
		}
		if err := r.AppendEvent(ctx, list.Sessions[0], textEvent("e1", "again")); !errors.Is(err, ErrExists) {
			t.Errorf("append of a stored event id through an unloaded session: %v, want ErrExists", err)
		}
		if got := texts(get(t, b.open(t), "s1")); len(got) != 1 {
			t.Errorf("stored events %q, want one", got)
		}
		if _, err := s.Live(ctx, testApp, testUser, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Live of an unknown session: %v, want ErrNotFound", err)
		}

		if err := s.Delete(ctx, &session.DeleteRequest{AppName: testApp, UserID: testUser, SessionID: "s1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: "s1"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get of a deleted session: %v, want ErrNotFound", err)
		}
		if err := s.AppendEvent(ctx, live, textEvent("e2", "two")); !errors.Is(err, ErrNotFound) {
			t.Errorf("append to a deleted session: %v, want ErrNotFound", err)
		}
		again := create(t, s, "s1", nil)
		if again == live || again.Events().Len() != 0 {
			t.Errorf("re-created session: same object %v, %d events", again == live, again.Events().Len())
		}
		if got := get(t, b.open(t), "s1"); got.Events().Len() != 0 {
			t.Errorf("re-created session has %d stored events", got.Events().Len())
		}
	})
}

// TestClockAndIDs: WithClock sets bookkeeping times; an event without an
// id gets one.
func TestClockAndIDs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		at := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
		s := b.open(t, WithClock(func() time.Time { return at }))
		live := create(t, s, "", nil)
		if live.ID() == "" || !live.LastUpdateTime().Equal(at) {
			t.Errorf("created session id %q at %v, want an id and %v", live.ID(), live.LastUpdateTime(), at)
		}
		ev := &session.Event{Author: "user", InvocationID: "i"}
		appendEv(t, s, live, ev)
		if ev.ID == "" || !live.LastUpdateTime().Equal(at) {
			t.Errorf("event without id or timestamp: id %q, session updated %v", ev.ID, live.LastUpdateTime())
		}
		got := get(t, b.open(t), live.ID())
		if got.Events().At(0).ID != ev.ID || !got.LastUpdateTime().Equal(at) {
			t.Errorf("reopened: event id %q, updated %v", got.Events().At(0).ID, got.LastUpdateTime())
		}
	})
}

// TestOpenSQLite: the directory is private, the file too, durability
// settings are on, and the schema is versioned.
func TestOpenSQLite(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "home", "agentry")
	path := filepath.Join(dir, "sessions.db")
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode(), err, want)
		}
	}
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "1", "busy_timeout": "10000", "journal_size_limit": "4194304"} {
		var got string
		if err := s.db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
	var v int
	if err := s.db.QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("schema_version %d (%v), want %d", v, err, schemaVersion)
	}
	create(t, s, "s1", nil)
	if _, err := s.db.Exec(`INSERT INTO schema_version (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSQLite(ctx, path); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}

// TestSQLiteKeepsEmptyLog: closing the store checkpoints the log into the
// database and leaves the log and its index in place, the log emptied and
// both as private as the database, so that the next process need not
// create them again.
func TestSQLiteKeepsEmptyLog(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.db")
	s, err := OpenSQLite(ctx, path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	appendEv(t, s, create(t, s, "s1", nil), textEvent("e1", "one"))
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("log while open: %v, %v; want a non-empty file", fi, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatalf("after close: %v", err)
		}
		if fi.Mode() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode())
		}
		if f == path+"-wal" && fi.Size() != 0 {
			t.Errorf("log after close: %d bytes, want 0", fi.Size())
		}
	}
	r, err := OpenSQLite(ctx, path, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := get(t, r, "s1"); got.Events().Len() != 1 {
		t.Errorf("reopened: %d events, want 1", got.Events().Len())
	}
}

// TestReopenKeepsSchema: opening an existing database keeps its sessions.
func TestReopenKeepsSchema(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t)
		appendEv(t, s, create(t, s, "s1", map[string]any{"k": "v"}), textEvent("e1", "one"))
		r := b.open(t)
		got := get(t, r, "s1")
		if got.Events().Len() != 1 || stateOf(got)["k"] != "v" {
			t.Errorf("reopened: %d events, state %v", got.Events().Len(), stateOf(got))
		}
	})
}
