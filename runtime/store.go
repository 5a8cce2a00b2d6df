package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/processors/conversation"
	"github.com/agentry-dev/agentry/sessions/listing"
)

// RewritableStore is a session service whose stored sessions can be
// rewritten in place: the live session object a running invocation
// appends to, some events' contents replaced, or a whole history replaced,
// each in one transaction. Masking, compression and rewind need one;
// *sessions.Store (SQLite, PostgreSQL) is one, ADK's in-memory service is
// not.
type RewritableStore interface {
	session.Service
	// Live returns the live object of a session, without starting an
	// invocation.
	LiveStore
	// ReplaceEventContents replaces the contents of events by id.
	ReplaceEventContents(ctx context.Context, appName, userID, sessionID string, contents map[string]*genai.Content) error
	// ReplaceEvents replaces a session's whole history, applying delta to
	// its state.
	ReplaceEvents(ctx context.Context, appName, userID, sessionID string, events []*session.Event, delta map[string]any) error
}

// LiveStore is a session service that hands out the live object of a
// session: the one a running invocation appends to, whose event and
// content objects stay the same from one read to the next. Every
// RewritableStore is one.
type LiveStore interface {
	Live(ctx context.Context, appName, userID, sessionID string) (session.Session, error)
}

// sessionEvents is the conversation processor's view of the sessions svc
// stores: a live store's live object, or else svc's Get (ADK's in-memory
// service shares its stored events with every copy).
func sessionEvents(svc session.Service) conversation.Events {
	if store, ok := svc.(LiveStore); ok {
		return func(ctx context.Context, app, user, sessionID string) (session.Events, error) {
			sess, err := store.Live(ctx, app, user, sessionID)
			if err != nil {
				return nil, err
			}
			return sess.Events(), nil
		}
	}
	return func(ctx context.Context, app, user, sessionID string) (session.Events, error) {
		resp, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: sessionID})
		if err != nil {
			return nil, err
		}
		return resp.Session.Events(), nil
	}
}

// StateWorkspace is the session state key holding the workspace a session
// was started in, so that resuming "the latest session" stays within the
// project.
const StateWorkspace = "agentry:workspace"

// StateTranscript is the session state key holding the path of the
// session's transcript file.
const StateTranscript = "agentry:transcript"

// StateParent is the session state key holding, in a subagent's child
// session, the id of the session that handed it the task. Listings leave
// child sessions out: they are part of their parent's conversation.
const StateParent = "agentry:parent"

// StoredSession describes a stored session as listings show it.
type StoredSession struct {
	// ID is the session id.
	ID string
	// Workspace is the workspace the session was started in.
	Workspace string
	// Started is when the session's latest run began (its last prompt),
	// gemini-cli's startTime, which a resumed session moves forward;
	// Updated is the time of its last event.
	Started, Updated time.Time
	// Turns counts the user's prompts.
	Turns int
	// FirstPrompt is the first prompt on one line: its whitespace
	// collapsed and control characters dropped, not cut.
	FirstPrompt string
	// Transcript is the path of the session's transcript file, or ""
	// for a session stored before transcripts.
	Transcript string
}

// ListSessions returns the resumable sessions started in workspace (of
// every workspace when workspace is ""), in the one order every listing
// and every resume by number share — gemini-cli's --list-sessions order:
// by the start of each session's latest run, oldest first, so that a
// resumed session moves to the end. Entry i is session number i+1
// ("agentry run -r N"), and the last entry is "latest", the session run
// most recently.
//
// Resumable means holding a conversation: a session whose run failed
// before anything was stored (no credentials, a bad model) is left out,
// and so are subagents' child sessions, which belong to their parent's
// conversation.
func ListSessions(ctx context.Context, svc SessionStore, workspace string) ([]StoredSession, error) {
	all, err := summaries(ctx, svc)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []StoredSession
	for _, s := range all {
		if p, _ := s.State[StateParent].(string); p != "" {
			continue
		}
		if s.Prompts == 0 && s.Replies == 0 {
			continue
		}
		st := storedSession(s)
		if workspace != "" && st.Workspace != workspace {
			continue
		}
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b StoredSession) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// summarizer is a session service that reads its sessions' summaries
// without loading their events, as agentry's session store does.
type summarizer interface {
	Summaries(ctx context.Context, appName, userID string) ([]listing.Summary, error)
}

// summaries reads the sessions' summaries: in one pass over the database
// for agentry's store, session by session for another.
func summaries(ctx context.Context, svc session.Service) ([]listing.Summary, error) {
	if st, ok := svc.(summarizer); ok {
		return st.Summaries(ctx, appName, userID)
	}
	resp, err := svc.List(ctx, &session.ListRequest{AppName: appName, UserID: userID})
	if err != nil {
		return nil, err
	}
	var out []listing.Summary
	for _, l := range resp.Sessions {
		got, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: l.ID()})
		if err != nil {
			continue // deleted since the list
		}
		out = append(out, summaryOf(got.Session))
	}
	return out, nil
}

// summaryOf reads a session's summary from the session itself, as
// agentry's session store reads it from its database.
func summaryOf(s session.Session) listing.Summary {
	sum := listing.Summary{ID: s.ID(), Created: s.LastUpdateTime(), Updated: s.LastUpdateTime(), State: maps.Collect(s.State().All())}
	for ev := range s.Events().All() {
		if sum.Prompts+sum.Replies == 0 && !ev.Timestamp.IsZero() {
			sum.Created = ev.Timestamp
		}
		if ev.Author != "user" {
			sum.Replies++
		} else {
			sum.AddUserEvent(ev.Timestamp, ev.Content)
		}
	}
	return sum
}

// storedSession is a summary as listings show it.
func storedSession(s listing.Summary) StoredSession {
	w, _ := s.State[StateWorkspace].(string)
	tr, _ := s.State[StateTranscript].(string)
	started := s.LastPromptAt
	if started.IsZero() {
		started = s.Created
	}
	return StoredSession{
		ID: s.ID, Workspace: w, Started: started, Updated: s.Updated, Turns: s.Prompts, FirstPrompt: oneLine(s.FirstPrompt), Transcript: tr,
	}
}

// oneLine puts text on one line for a listing: runs of whitespace become
// one space, control characters go (as gemini-cli cleans a session's
// first message), and a leading session context block is skipped.
func oneLine(text string) string {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "<session_context>"); ok {
		if _, after, found := strings.Cut(rest, "</session_context>"); found {
			text = after
		}
	}
	var b strings.Builder
	space := false
	for _, r := range text {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EnsureSession creates the stored session with its workspace (and, for
// a subagent's child session, its parent) unless it exists: a resumed
// session keeps its history and its workspace.
func EnsureSession(ctx context.Context, svc session.Service, id, workspace, parent, newTranscript string) (transcriptPath string, existed bool, err error) {
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
	if err != nil {
		state := map[string]any{StateWorkspace: workspace, StateTranscript: newTranscript}
		if parent != "" {
			state[StateParent] = parent
		}
		_, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id, State: state})
		if err != nil {
			return "", false, fmt.Errorf("%w: create session %s: %w", ErrSetup, id, err)
		}
		return newTranscript, false, nil
	}
	if p, err := resp.Session.State().Get(StateTranscript); err == nil {
		if p, ok := p.(string); ok && p != "" {
			return p, true, nil
		}
	}
	// A session stored before it had a transcript gets one from now on;
	// a state-only event records where.
	ev := session.NewEvent(ctx, "agentry-transcript")
	ev.Author = "user"
	ev.Actions.StateDelta = map[string]any{StateTranscript: newTranscript}
	if err := svc.AppendEvent(ctx, resp.Session, ev); err != nil {
		return "", true, fmt.Errorf("%w: session %s: record its transcript: %w", ErrSetup, id, err)
	}
	return newTranscript, true, nil
}

// DropIfEmpty deletes a stored session, and its transcript file, when it
// holds no conversation: no event with content.
func DropIfEmpty(ctx context.Context, svc session.Service, id, transcriptPath string) error {
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
	if err != nil {
		return nil // gone already
	}
	for ev := range resp.Session.Events().All() {
		if ev.Content != nil && len(ev.Content.Parts) > 0 {
			return nil
		}
	}
	if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: id}); err != nil {
		return fmt.Errorf("delete the unused session %s: %w", id, err)
	}
	if transcriptPath != "" {
		if err := os.Remove(transcriptPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete the unused session's transcript: %w", err)
		}
	}
	return nil
}

// AnsweredBy returns the model that produced a stored model response
// (after routing and fallbacks), or "" when the event does not say.
func AnsweredBy(ev *session.Event) string {
	m, _ := ev.CustomMetadata[metaModel].(string)
	return m
}

// GetSession returns a stored session, or an error wrapping ErrNoSession.
func GetSession(ctx context.Context, svc session.Service, id string) (session.Session, error) {
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrNoSession, id, err)
	}
	return resp.Session, nil
}

// DeleteSession removes a stored session and the child sessions of the
// subagents it ran, and returns the transcript files of every session it
// removed, for the caller to delete.
func DeleteSession(ctx context.Context, svc SessionStore, id string) (transcripts []string, err error) {
	sess, err := GetSession(ctx, svc, id)
	if err != nil {
		return nil, err
	}
	resp, err := svc.List(ctx, &session.ListRequest{AppName: appName, UserID: userID})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	remove := []session.Session{sess}
	for _, s := range resp.Sessions {
		if p, _ := s.State().Get(StateParent); p == id {
			remove = append(remove, s)
		}
	}
	// Children first: a failure half-way leaves the parent listed, so
	// the delete can be run again.
	for i := len(remove) - 1; i >= 0; i-- {
		s := remove[i]
		if err := svc.Delete(ctx, &session.DeleteRequest{AppName: appName, UserID: userID, SessionID: s.ID()}); err != nil {
			return transcripts, fmt.Errorf("delete session %s: %w", s.ID(), err)
		}
		if p, _ := s.State().Get(StateTranscript); p != nil {
			if path, _ := p.(string); path != "" {
				transcripts = append(transcripts, path)
			}
		}
	}
	return transcripts, nil
}

// ErrNoSession reports a session id the store does not hold.
var ErrNoSession = errors.New("no stored session")

// The ADK app and user every stored session belongs to.
const (
	appName = "agentry"
	userID  = "user"
)
