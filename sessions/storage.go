package sessions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/adk/v2/session"
)

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// hotStatements are prepared once, when the Store opens: they run on
// every append or replacement, and parsing them each time would cost a
// tenth of an SQLite append.
func (d dialect) hotStatements() []string {
	return []string{d.appendEvent, touchSession, insertEvent, updateEventData, upsertSessionState, upsertAppState, upsertUserState}
}

// prepare prepares the hot statements.
func (s *Store) prepare(ctx context.Context) error {
	hot := s.d.hotStatements()
	s.stmts = make(map[string]*sql.Stmt, len(hot))
	for _, q := range hot {
		st, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[q] = st
	}
	return nil
}

// exec runs query in tx (or directly if tx is nil), prepared if it is a
// hot statement.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st := s.stmts[query]
	switch {
	case st == nil && tx == nil:
		return s.db.ExecContext(ctx, query, args...)
	case st == nil:
		return tx.ExecContext(ctx, query, args...)
	case tx == nil:
		return st.ExecContext(ctx, args...)
	default:
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
}

const (
	insertSession = `INSERT INTO sessions (app_name, user_id, session_id, create_time, update_time)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT (app_name, user_id, session_id) DO NOTHING`
	touchSession = `UPDATE sessions SET update_time = $4
		WHERE app_name = $1 AND user_id = $2 AND session_id = $3`
	selectSession = `SELECT update_time FROM sessions
		WHERE app_name = $1 AND user_id = $2 AND session_id = $3`
	insertEvent = `INSERT INTO events (app_name, user_id, session_id, event_id, invocation_id, author, timestamp_us, data)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (app_name, user_id, session_id, event_id) DO NOTHING`
	selectEvents = `SELECT data FROM events
		WHERE app_name = $1 AND user_id = $2 AND session_id = $3 ORDER BY seq`
	updateEventData = `UPDATE events SET data = $5
		WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND event_id = $4`
	upsertSessionState = `INSERT INTO session_state (app_name, user_id, session_id, state_key, state_value)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (app_name, user_id, session_id, state_key) DO UPDATE SET state_value = excluded.state_value`
	selectSessionState = `SELECT state_key, state_value FROM session_state
		WHERE app_name = $1 AND user_id = $2 AND session_id = $3`
	upsertAppState = `INSERT INTO app_state (app_name, state_key, state_value) VALUES ($1, $2, $3)
		ON CONFLICT (app_name, state_key) DO UPDATE SET state_value = excluded.state_value`
	upsertUserState = `INSERT INTO user_state (app_name, user_id, state_key, state_value) VALUES ($1, $2, $3, $4)
		ON CONFLICT (app_name, user_id, state_key) DO UPDATE SET state_value = excluded.state_value`
)

// splitState splits a state map or delta into ADK's scopes, with the app:
// and user: prefixes removed.
func splitState(delta map[string]any) (app, user, own, temp map[string]any) {
	for k, v := range delta {
		var m *map[string]any
		if rest, ok := strings.CutPrefix(k, session.KeyPrefixApp); ok {
			k, m = rest, &app
		} else if rest, ok := strings.CutPrefix(k, session.KeyPrefixUser); ok {
			k, m = rest, &user
		} else if strings.HasPrefix(k, session.KeyPrefixTemp) {
			m = &temp
		} else {
			m = &own
		}
		if *m == nil {
			*m = map[string]any{}
		}
		(*m)[k] = v
	}
	return app, user, own, temp
}

// writeStates writes a session's own, app and user state changes in tx,
// each to its table.
func (s *Store) writeStates(ctx context.Context, tx *sql.Tx, k key, own, app, user map[string]any) error {
	if err := s.writeState(ctx, tx, upsertSessionState, own, k.app, k.user, k.id); err != nil {
		return err
	}
	if err := s.writeState(ctx, tx, upsertAppState, app, k.app); err != nil {
		return err
	}
	return s.writeState(ctx, tx, upsertUserState, user, k.app, k.user)
}

// writeState upserts each key of m with the statement q, whose leading
// arguments are prefix and whose last two are the key and the JSON value.
func (s *Store) writeState(ctx context.Context, tx *sql.Tx, q string, m map[string]any, prefix ...any) error {
	for k, v := range m {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode state %q: %w", k, err)
		}
		args := append(append(make([]any, 0, len(prefix)+2), prefix...), k, string(raw))
		if _, err := s.exec(ctx, tx, q, args...); err != nil {
			return fmt.Errorf("write state %q: %w", k, err)
		}
	}
	return nil
}

func decodeValue(raw string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// trimTemp returns the event as stored: without temp: keys in its state
// delta. Like ADK it copies the event only when there are some, and never
// changes the caller's.
func trimTemp(ev *session.Event) *session.Event {
	n := 0
	for k := range ev.Actions.StateDelta {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			n++
		}
	}
	if n == 0 {
		return ev
	}
	kept := make(map[string]any, len(ev.Actions.StateDelta)-n)
	for k, v := range ev.Actions.StateDelta {
		if !strings.HasPrefix(k, session.KeyPrefixTemp) {
			kept[k] = v
		}
	}
	c := *ev
	c.Actions.StateDelta = kept
	return &c
}

// inTx runs f in a transaction and commits it.
func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// load reads a session into its entry, with the entry's operation lock
// held. A missing session is ErrNotFound.
func (s *Store) load(ctx context.Context, e *storedSession) error {
	start := time.Now()
	k := e.key
	app, user := s.appState(k.app), s.userState(k.app, k.user)
	if err := app.ensure(ctx, s.db); err != nil {
		return fmt.Errorf("app state: %w", err)
	}
	if err := user.ensure(ctx, s.db); err != nil {
		return fmt.Errorf("user state: %w", err)
	}
	var updated int64
	err := s.db.QueryRowContext(ctx, selectSession, k.app, k.user, k.id).Scan(&updated)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("session %s: %w", k, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read session: %w", err)
	}
	state, err := readState(ctx, s.db, selectSessionState, k.app, k.user, k.id)
	if err != nil {
		return err
	}
	events, err := readEvents(ctx, s.db, k)
	if err != nil {
		return err
	}
	idx := make(map[string]int, len(events))
	for i, ev := range events {
		idx[ev.ID] = i
	}
	if n := len(events); n > 0 && s.d.lastEventTime {
		updated = max(updated, events[n-1].Timestamp.UnixMicro())
	}
	e.mu.Lock()
	e.app, e.user = app, user
	e.events, e.idx, e.state = events, idx, state
	e.updated = time.UnixMicro(updated)
	e.mu.Unlock()
	s.setLoaded(e)
	s.log.Debug("session loaded", "session", k.String(), "events", len(events), "took", time.Since(start))
	return nil
}

func readEvents(ctx context.Context, q queryer, k key) ([]*session.Event, error) {
	rows, err := q.QueryContext(ctx, selectEvents, k.app, k.user, k.id)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var events []*session.Event
	var data sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		ev := new(session.Event)
		if err := json.Unmarshal(data, ev); err != nil {
			return nil, fmt.Errorf("decode event %d of session %s: %w", len(events), k, err)
		}
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return events, nil
}

// updateTimes sets the update time of the listed sessions (of one app,
// matching where) to their last event's timestamp where that is later than
// their row's, in a database whose appends leave the row alone (see
// dialect.lastEventTime). The last events are found in the events index,
// which holds seq (SQLite's rowid), without reading the other rows.
func (s *Store) updateTimes(ctx context.Context, where string, args []any, set func(k key, lastEvent int64)) error {
	if !s.d.lastEventTime {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, session_id, timestamp_us FROM events
		WHERE seq IN (SELECT MAX(seq) FROM events WHERE `+where+` GROUP BY user_id, session_id)`, args...)
	if err != nil {
		return fmt.Errorf("read last events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		k := key{app: args[0].(string)}
		var at int64
		if err := rows.Scan(&k.user, &k.id, &at); err != nil {
			return fmt.Errorf("read last events: %w", err)
		}
		set(k, at)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read last events: %w", err)
	}
	return nil
}
