package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"
)

const deleteEvents = `DELETE FROM events WHERE app_name = $1 AND user_id = $2 AND session_id = $3`

// ReplaceEvents replaces every event of a session with events, in order,
// in one transaction: compression and rewind rewrite a session's history
// this way, and a crash or an error leaves either the old history or the
// new one, never a mix. delta, which may be nil, is applied to the
// session's state in the same transaction, by scope as AppendEvent applies
// an event's delta (temp: keys reach only the live object).
//
// The live object (loaded if needed) gets a new event slice; readers
// holding the old one keep it unchanged. An event without an ID gets a new
// UUID (the caller's event is changed); partial events and repeated IDs are
// refused, so the stored history is one the runner could have appended.
// Events are stored as given, temp: keys of their deltas stripped. The
// session's update time becomes the time of the rewrite, or its last
// event's timestamp if that is later. An unknown session is ErrNotFound.
func (s *Store) ReplaceEvents(ctx context.Context, appName, userID, sessionID string, events []*session.Event, delta map[string]any) error {
	k := key{appName, userID, sessionID}
	seen := make(map[string]int, len(events))
	stored := make([]*session.Event, len(events))
	data := make([]string, len(events))
	for i, ev := range events {
		switch {
		case ev == nil:
			return fmt.Errorf("sessions: replace events of %s: event %d is nil", k, i)
		case ev.Partial:
			return fmt.Errorf("sessions: replace events of %s: event %d is partial; only complete events are stored", k, i)
		}
		if ev.ID == "" {
			ev.ID = platform.NewUUID(ctx)
		}
		if j, dup := seen[ev.ID]; dup {
			return fmt.Errorf("sessions: replace events of %s: events %d and %d share id %s: %w", k, j, i, ev.ID, ErrExists)
		}
		seen[ev.ID] = i
		stored[i] = trimTemp(ev)
		b, err := s.encode(stored[i])
		if err != nil {
			return fmt.Errorf("sessions: replace events of %s: encode event %s: %w", k, ev.ID, err)
		}
		data[i] = b
	}

	e, err := s.lock(ctx, k)
	if err != nil {
		return fmt.Errorf("sessions: replace events: %w", err)
	}
	defer s.unlock(e)
	if !e.loaded {
		if err := s.load(ctx, e); err != nil {
			return fmt.Errorf("sessions: replace events: %w", err)
		}
	}
	appDelta, userDelta, own, temp := splitState(delta)
	var app, user *sharedState
	if len(appDelta) > 0 {
		if app, err = s.lockShared(ctx, s.appState(k.app)); err != nil {
			return fmt.Errorf("sessions: replace events of %s: %w", k, err)
		}
		defer app.unlockWrite()
	}
	if len(userDelta) > 0 {
		if user, err = s.lockShared(ctx, s.userState(k.app, k.user)); err != nil {
			return fmt.Errorf("sessions: replace events of %s: %w", k, err)
		}
		defer user.unlockWrite()
	}
	// The rewrite's time, or its last event's if that is later: a
	// session's update time is never earlier than its last event (see
	// AppendEvent).
	updated := s.now(ctx)
	if n := len(stored); n > 0 && stored[n-1].Timestamp.After(updated) {
		updated = stored[n-1].Timestamp
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := s.exec(ctx, tx, touchSession, k.app, k.user, k.id, updated.UnixMicro())
		if err != nil {
			return fmt.Errorf("update session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update session: %w", err)
		} else if n == 0 {
			return ErrNotFound
		}
		if _, err := s.exec(ctx, tx, deleteEvents, k.app, k.user, k.id); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
		for i, ev := range stored {
			if _, err := s.exec(ctx, tx, insertEvent, k.app, k.user, k.id, ev.ID, ev.InvocationID, ev.Author, ev.Timestamp.UnixMicro(), data[i]); err != nil {
				return fmt.Errorf("insert event %s: %w", ev.ID, err)
			}
		}
		return s.writeStates(ctx, tx, k, own, appDelta, userDelta)
	})
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("sessions: replace events: session %s: %w", k, err)
	}
	if err != nil {
		return fmt.Errorf("sessions: replace events of %s: %w", k, err)
	}
	app.apply(appDelta)
	user.apply(userDelta)
	idx := make(map[string]int, len(stored))
	for i, ev := range stored {
		idx[ev.ID] = i
	}
	e.mu.Lock()
	e.events = stored
	e.idx = idx
	maps.Copy(e.state, own)
	maps.Copy(e.state, temp)
	e.updated = updated
	e.mu.Unlock()
	return nil
}
