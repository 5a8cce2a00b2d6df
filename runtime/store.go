package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/sessions"
)

// OpenStore opens the session store the settings name: the SQLite file
// under the agentry home (the default), PostgreSQL, or memory. A process
// opens it once and hands it to every session it builds; close releases
// it.
func OpenStore(ctx context.Context, s *config.Settings, log *slog.Logger) (svc session.Service, close func() error, err error) {
	if log == nil {
		log = slog.Default()
	}
	switch s.Session.Store {
	case config.SessionStoreMemory:
		return session.InMemoryService(), func() error { return nil }, nil
	case config.SessionStorePostgres:
		if s.Session.PostgresDSN == "" {
			return nil, nil, fmt.Errorf("%w: session.store is postgres but session.postgresDsn is empty; set it (or AGENTRY_SESSION_POSTGRESDSN) to a connection string such as postgres://user@127.0.0.1:5432/agentry", ErrSetup)
		}
		st, err := sessions.OpenPostgres(ctx, s.Session.PostgresDSN, sessions.WithLogger(log))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: session store: %w", ErrSetup, err)
		}
		return st, st.Close, nil
	default:
		path := s.SessionDBPath()
		st, err := sessions.OpenSQLite(ctx, path, sessions.WithLogger(log))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: session store %s: %w", ErrSetup, path, err)
		}
		return st, st.Close, nil
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

// StoredSession describes a stored session.
type StoredSession struct {
	// ID is the session id.
	ID string
	// Workspace is the workspace the session was started in.
	Workspace string
	// Updated is the time of the session's last event.
	Updated time.Time
}

// ListSessions returns the stored sessions started in workspace (all of
// them when workspace is ""), most recently updated first.
func ListSessions(ctx context.Context, svc session.Service, workspace string) ([]StoredSession, error) {
	resp, err := svc.List(ctx, &session.ListRequest{AppName: appName, UserID: userID})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []StoredSession
	for _, s := range resp.Sessions {
		if p, _ := s.State().Get(StateParent); p != nil && p != "" {
			continue
		}
		ws, _ := s.State().Get(StateWorkspace)
		w, _ := ws.(string)
		if workspace != "" && w != workspace {
			continue
		}
		out = append(out, StoredSession{ID: s.ID(), Workspace: w, Updated: s.LastUpdateTime()})
	}
	slices.SortStableFunc(out, func(a, b StoredSession) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

// ensureSession creates the stored session with its workspace (and, for
// a subagent's child session, its parent) unless it exists: a resumed
// session keeps its history and its workspace.
func ensureSession(ctx context.Context, svc session.Service, id, workspace, parent, newTranscript string) (transcriptPath string, existed bool, err error) {
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
func DeleteSession(ctx context.Context, svc session.Service, id string) (transcripts []string, err error) {
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
