package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/platform"
	"google.golang.org/adk/v2/session"
)

// Create creates a session (with a new UUID when req.SessionID is empty)
// and returns its live object. Keys of req.State are stored by scope, as
// AppendEvent stores a delta; temp: keys only reach the live object.
func (s *Store) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	if req.AppName == "" || req.UserID == "" {
		return nil, fmt.Errorf("sessions: create: app name and user id are required, got %q and %q", req.AppName, req.UserID)
	}
	k := key{req.AppName, req.UserID, req.SessionID}
	if k.id == "" {
		k.id = platform.NewUUID(ctx)
	}
	e, err := s.lock(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("sessions: create: %w", err)
	}
	defer s.unlock(e)

	appDelta, userDelta, own, temp := splitState(req.State)
	app, user := s.appState(k.app), s.userState(k.app, k.user)
	// The live object needs both shared states loaded; loading them under
	// the write locks orders the load with this transaction.
	for _, st := range []*sharedState{app, user} {
		if err := st.lockWrite(ctx); err != nil {
			return nil, fmt.Errorf("sessions: create %s: %w", k, err)
		}
		defer st.unlockWrite()
		if err := st.load(ctx, s.db); err != nil {
			return nil, fmt.Errorf("sessions: create %s: %w", k, err)
		}
	}
	now := s.now(ctx)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, insertSession, k.app, k.user, k.id, now.UnixMicro())
		if err != nil {
			return fmt.Errorf("insert session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("insert session: %w", err)
		} else if n == 0 {
			return ErrExists
		}
		return s.writeStates(ctx, tx, k, own, appDelta, userDelta)
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: create %s: %w", k, err)
	}
	app.apply(appDelta)
	user.apply(userDelta)
	state := make(map[string]any, len(own)+len(temp))
	maps.Copy(state, own)
	maps.Copy(state, temp)
	e.mu.Lock()
	e.app, e.user = app, user
	e.events, e.idx, e.state = nil, map[string]int{}, state
	e.updated = now
	e.mu.Unlock()
	s.setLoaded(e)
	return &session.CreateResponse{Session: e}, nil
}

// Get returns the session. Without filters it is the live object, loaded
// from storage on first use; the temp: state of the previous invocation is
// dropped from it, since ADK's runner starts every run with this Get (code
// inside a run uses Live instead). With NumRecentEvents or After it is a
// copy holding the matching events (copies of the live ones) and the
// stored state. An unknown session is ErrNotFound.
func (s *Store) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return nil, fmt.Errorf("sessions: get: app name, user id and session id are required, got %q, %q and %q", req.AppName, req.UserID, req.SessionID)
	}
	e, err := s.liveObject(ctx, key{req.AppName, req.UserID, req.SessionID})
	if err != nil {
		return nil, fmt.Errorf("sessions: get: %w", err)
	}
	if req.NumRecentEvents <= 0 && req.After.IsZero() {
		e.dropTemp()
		return &session.GetResponse{Session: e}, nil
	}
	return &session.GetResponse{Session: e.filteredCopy(req.NumRecentEvents, req.After)}, nil
}

// Live returns the live object of a session, loading it if needed, like an
// unfiltered Get but without starting an invocation: the temp: state is
// kept. It is for code that runs inside an invocation and needs the
// session the runner appends to; in ADK v2.2 a model or tool callback's
// context has no Session (it returns nil). An unknown session is
// ErrNotFound.
func (s *Store) Live(ctx context.Context, appName, userID, sessionID string) (session.Session, error) {
	e, err := s.liveObject(ctx, key{appName, userID, sessionID})
	if err != nil {
		return nil, fmt.Errorf("sessions: live: %w", err)
	}
	return e, nil
}

// liveObject returns a session's live object, loading it if needed.
func (s *Store) liveObject(ctx context.Context, k key) (*storedSession, error) {
	// A loaded session is served from memory without waiting for an
	// append of it that is in flight.
	s.mu.Lock()
	e := s.live[k]
	loaded := e != nil && e.loaded
	s.mu.Unlock()
	if loaded {
		return e, nil
	}
	e, err := s.lock(ctx, k)
	if err != nil {
		return nil, err
	}
	defer s.unlock(e)
	if !e.loaded {
		if err := s.load(ctx, e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// filteredCopy returns a copy of a live session with at most n (if n > 0)
// of the latest events, of those not before after (if set).
func (s *storedSession) filteredCopy(n int, after time.Time) *storedSession {
	state := s.mergedState(false)
	s.mu.RLock()
	evs := s.events
	updated := s.updated
	s.mu.RUnlock()
	if n > 0 && len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	out := make([]*session.Event, 0, len(evs))
	for _, ev := range evs {
		if !after.IsZero() && ev.Timestamp.Before(after) {
			continue
		}
		c := *ev
		out = append(out, &c)
	}
	return &storedSession{key: s.key, events: out, state: state, updated: updated}
}

// List returns copies of the app's sessions (of one user if req.UserID is
// set), ordered by user and session id, with their stored state and no
// events, as ADK's services list them.
func (s *Store) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	if req.AppName == "" {
		return nil, fmt.Errorf("sessions: list: app name is required")
	}
	where, args := "app_name = $1", []any{req.AppName}
	if req.UserID != "" {
		where, args = where+" AND user_id = $2", append(args, req.UserID)
	}
	var out []*storedSession
	byKey := map[key]*storedSession{}
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, session_id, update_time FROM sessions WHERE `+where+` ORDER BY user_id, session_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	for rows.Next() {
		var (
			k       = key{app: req.AppName}
			updated int64
		)
		if err := rows.Scan(&k.user, &k.id, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sessions: list: %w", err)
		}
		c := &storedSession{key: k, state: map[string]any{}, updated: time.UnixMicro(updated)}
		out = append(out, c)
		byKey[k] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	if err := s.listState(ctx, where, args, byKey); err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	err = s.updateTimes(ctx, where, args, func(k key, last int64) {
		if c := byKey[k]; c != nil && last > c.updated.UnixMicro() {
			c.updated = time.UnixMicro(last)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	app := s.appState(req.AppName)
	if err := app.ensure(ctx, s.db); err != nil {
		return nil, fmt.Errorf("sessions: list: app state: %w", err)
	}
	resp := &session.ListResponse{Sessions: make([]session.Session, 0, len(out))}
	for _, c := range out {
		user := s.userState(c.key.app, c.key.user)
		if err := user.ensure(ctx, s.db); err != nil {
			return nil, fmt.Errorf("sessions: list: user state: %w", err)
		}
		app.copyInto(c.state, session.KeyPrefixApp)
		user.copyInto(c.state, session.KeyPrefixUser)
		resp.Sessions = append(resp.Sessions, c)
	}
	return resp, nil
}

// listState reads the own state of the listed sessions into them.
func (s *Store) listState(ctx context.Context, where string, args []any, byKey map[key]*storedSession) error {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, session_id, state_key, state_value FROM session_state WHERE `+where, args...)
	if err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k        = key{app: args[0].(string)}
			name     string
			rawValue string
		)
		if err := rows.Scan(&k.user, &k.id, &name, &rawValue); err != nil {
			return fmt.Errorf("read state: %w", err)
		}
		c := byKey[k]
		if c == nil {
			continue // created after the session query
		}
		v, err := decodeValue(rawValue)
		if err != nil {
			return fmt.Errorf("read state %q of %s: %w", name, k, err)
		}
		c.state[name] = v
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	return nil
}

// Delete deletes the session and its events and state; deleting a session
// that does not exist is not an error. Its live object stays readable, but
// appends to it fail.
func (s *Store) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req.AppName == "" || req.UserID == "" || req.SessionID == "" {
		return fmt.Errorf("sessions: delete: app name, user id and session id are required, got %q, %q and %q", req.AppName, req.UserID, req.SessionID)
	}
	k := key{req.AppName, req.UserID, req.SessionID}
	e, err := s.lock(ctx, k)
	if err != nil {
		return fmt.Errorf("sessions: delete: %w", err)
	}
	defer s.unlock(e)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"events", "session_state", "sessions"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE app_name = $1 AND user_id = $2 AND session_id = $3`, k.app, k.user, k.id); err != nil {
				return fmt.Errorf("delete from %s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: delete %s: %w", k, err)
	}
	s.forget(e)
	return nil
}

// AppendEvent stores the event and appends it to the session, unless it is
// partial. Like ADK's services it appends to the session object it is
// given (the live object, or a copy) and to the stored session: when the
// object is the live one that is a single append. The state delta is
// applied by scope; temp: keys reach only the given object and are
// stripped from the stored event (a copy of the event, the caller's is not
// changed). An event without an ID gets a new UUID. An event whose ID the
// session already has is refused with ErrExists, so nothing is stored
// twice.
//
// An append that returned is committed: in SQLite its pages are in the
// write-ahead log, in the operating system's cache, before the commit
// returns, so it survives the process being killed. Most appends are one
// statement, the event's insert, committed on its own: those of a loaded
// session whose event has a timestamp no earlier than the session's update
// time and no state change to store. The others run in a transaction
// that also sets the session's update time and writes the state. In
// SQLite the single statement leaves the session's row alone, so a
// session's stored update time is the later of its row's and its last
// event's timestamp; the condition above makes that the time of the last
// append, as it is in the live object.
func (s *Store) AppendEvent(ctx context.Context, cur session.Session, ev *session.Event) error {
	if cur == nil {
		return errors.New("sessions: append: session is nil")
	}
	if ev == nil {
		return errors.New("sessions: append: event is nil")
	}
	if ev.Partial {
		return nil
	}
	so, ok := cur.(*storedSession)
	if !ok {
		return fmt.Errorf("sessions: append: unexpected session type %T for session %s", cur, cur.ID())
	}
	k := so.key
	e, err := s.lock(ctx, k)
	if err != nil {
		return fmt.Errorf("sessions: append: %w", err)
	}
	defer s.unlock(e)
	live := so == e

	if ev.ID == "" {
		ev.ID = platform.NewUUID(ctx)
	}
	if e.loaded {
		e.mu.RLock()
		_, dup := e.idx[ev.ID]
		e.mu.RUnlock()
		if dup {
			return fmt.Errorf("sessions: append to %s: event %s: %w", k, ev.ID, ErrExists)
		}
	}
	stored := trimTemp(ev)
	data, err := s.encode(stored)
	if err != nil {
		return fmt.Errorf("sessions: append to %s: encode event %s: %w", k, ev.ID, err)
	}
	appDelta, userDelta, own, temp := splitState(ev.Actions.StateDelta)
	var app, user *sharedState
	if len(appDelta) > 0 {
		if app, err = s.lockShared(ctx, s.appState(k.app)); err != nil {
			return fmt.Errorf("sessions: append to %s: %w", k, err)
		}
		defer app.unlockWrite()
	}
	if len(userDelta) > 0 {
		if user, err = s.lockShared(ctx, s.userState(k.app, k.user)); err != nil {
			return fmt.Errorf("sessions: append to %s: %w", k, err)
		}
		defer user.unlockWrite()
	}
	updated := ev.Timestamp
	if updated.IsZero() {
		updated = s.now(ctx)
	}
	if e.loaded && !ev.Timestamp.IsZero() && !ev.Timestamp.Before(e.LastUpdateTime()) &&
		len(own) == 0 && len(appDelta) == 0 && len(userDelta) == 0 {
		err = s.appendOne(ctx, k, stored, data)
	} else {
		err = s.appendInTx(ctx, k, stored, data, updated, own, appDelta, userDelta)
	}
	if err != nil {
		return fmt.Errorf("sessions: append to %s: %w", k, err)
	}

	app.apply(appDelta)
	user.apply(userDelta)
	if e.loaded {
		lev := stored
		if !live {
			// The live object gets its own copy: what happens to the
			// caller's object and event stays with the caller.
			c := *stored
			lev = &c
		}
		e.mu.Lock()
		e.idx[lev.ID] = len(e.events)
		e.events = append(e.events, lev)
		maps.Copy(e.state, own)
		if live {
			maps.Copy(e.state, temp)
		}
		e.updated = updated
		e.mu.Unlock()
	}
	if !live {
		so.mu.Lock()
		so.events = append(so.events, stored)
		if so.state == nil {
			so.state = map[string]any{}
		}
		if so.app != nil {
			// A former live object: its app: and user: keys are read
			// from the shared state, updated above.
			maps.Copy(so.state, own)
			maps.Copy(so.state, temp)
		} else {
			maps.Copy(so.state, ev.Actions.StateDelta)
		}
		so.updated = updated
		so.mu.Unlock()
	}
	return nil
}

// appendOne stores an event in one statement, its own transaction.
func (s *Store) appendOne(ctx context.Context, k key, ev *session.Event, data string) error {
	res, err := s.exec(ctx, nil, s.d.appendEvent, k.app, k.user, k.id, ev.ID, ev.InvocationID, ev.Author, ev.Timestamp.UnixMicro(), data)
	if err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("insert event: %w", err)
	} else if n == 1 {
		return nil
	}
	// No row: the session is gone or already has the event.
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE app_name = $1 AND user_id = $2 AND session_id = $3`, k.app, k.user, k.id).Scan(&n); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return fmt.Errorf("event %s: %w", ev.ID, ErrExists)
}

// appendInTx stores an event in a transaction that also sets the
// session's update time and writes the event's state changes.
func (s *Store) appendInTx(ctx context.Context, k key, ev *session.Event, data string, updated time.Time, own, app, user map[string]any) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		// Touching the session first checks that it exists and, in
		// SQLite, takes the write lock before anything is read.
		res, err := s.exec(ctx, tx, touchSession, k.app, k.user, k.id, updated.UnixMicro())
		if err != nil {
			return fmt.Errorf("update session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update session: %w", err)
		} else if n == 0 {
			return ErrNotFound
		}
		res, err = s.exec(ctx, tx, insertEvent, k.app, k.user, k.id, ev.ID, ev.InvocationID, ev.Author, ev.Timestamp.UnixMicro(), data)
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("insert event: %w", err)
		} else if n == 0 {
			return fmt.Errorf("event %s: %w", ev.ID, ErrExists)
		}
		return s.writeStates(ctx, tx, k, own, app, user)
	})
}

// lockShared takes a shared state's write lock and loads it, so the
// change about to be committed can be applied to it in commit order.
func (s *Store) lockShared(ctx context.Context, st *sharedState) (*sharedState, error) {
	if err := st.lockWrite(ctx); err != nil {
		return nil, err
	}
	if err := st.load(ctx, s.db); err != nil {
		st.unlockWrite()
		return nil, err
	}
	return st, nil
}

// ReplaceEventContent replaces the content of event eventID of a session,
// in its live object (loading it if needed) and in storage, in one
// statement. The live object gets a new *session.Event in place of the
// old one, which is not changed, so a reader holding it never races the
// replacement. An unknown session or event is ErrNotFound.
func (s *Store) ReplaceEventContent(ctx context.Context, appName, userID, sessionID, eventID string, content *genai.Content) error {
	return s.ReplaceEventContents(ctx, appName, userID, sessionID, map[string]*genai.Content{eventID: content})
}

// ReplaceEventContents replaces the contents of several events of a
// session, keyed by event id, as ReplaceEventContent does one: in the
// live object and in storage, in one transaction, so either all are
// replaced or, on any error, none. An unknown session or event is
// ErrNotFound. Masking replaces hundreds of responses at once on a long
// session's first pass; one transaction and one copy of the event slice
// keep that to milliseconds.
func (s *Store) ReplaceEventContents(ctx context.Context, appName, userID, sessionID string, contents map[string]*genai.Content) error {
	if len(contents) == 0 {
		return nil
	}
	k := key{appName, userID, sessionID}
	e, err := s.lock(ctx, k)
	if err != nil {
		return fmt.Errorf("sessions: replace content: %w", err)
	}
	defer s.unlock(e)
	if !e.loaded {
		if err := s.load(ctx, e); err != nil {
			return fmt.Errorf("sessions: replace content: %w", err)
		}
	}
	type replacement struct {
		i    int
		ev   *session.Event
		data string
	}
	repl := make([]replacement, 0, len(contents))
	e.mu.RLock()
	for id, content := range contents {
		i, ok := e.idx[id]
		if !ok {
			e.mu.RUnlock()
			return fmt.Errorf("sessions: replace content: event %s of session %s: %w", id, k, ErrNotFound)
		}
		nev := *e.events[i]
		nev.LLMResponse.Content = content
		repl = append(repl, replacement{i: i, ev: &nev})
	}
	e.mu.RUnlock()
	for j := range repl {
		data, err := s.encode(repl[j].ev)
		if err != nil {
			return fmt.Errorf("sessions: replace content of event %s: encode: %w", repl[j].ev.ID, err)
		}
		repl[j].data = data
	}
	write := func(tx *sql.Tx) error {
		for _, r := range repl {
			res, err := s.exec(ctx, tx, updateEventData, k.app, k.user, k.id, r.ev.ID, r.data)
			if err != nil {
				return fmt.Errorf("event %s: %w", r.ev.ID, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("event %s: %w", r.ev.ID, err)
			} else if n == 0 {
				return fmt.Errorf("event %s of session %s is not stored: %w", r.ev.ID, k, ErrNotFound)
			}
		}
		return nil
	}
	if len(repl) == 1 {
		// One statement is its own transaction.
		err = write(nil)
	} else {
		err = s.inTx(ctx, write)
	}
	if err != nil {
		return fmt.Errorf("sessions: replace content: %w", err)
	}
	e.mu.Lock()
	evs := slices.Clone(e.events)
	for _, r := range repl {
		evs[r.i] = r.ev
	}
	e.events = evs
	e.mu.Unlock()
	return nil
}
