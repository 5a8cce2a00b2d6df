package sessions

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"sync"
)

// sharedState is the app or user state that every live session of the app
// or user reads, so that a change made through one session is seen by the
// others at once, as ADK's in-memory service shows it to later Gets.
type sharedState struct {
	// write is held from the start of a transaction that changes this
	// state until the change is applied in memory, so the memory applies
	// changes in the order the database committed them. Lock order:
	// session operation lock, then app write, then user write.
	write chan struct{}

	query string
	args  []any

	mu     sync.RWMutex // guards loaded and m
	loaded bool
	m      map[string]any // keys without their prefix
}

func newSharedState(query string, args ...any) *sharedState {
	return &sharedState{write: make(chan struct{}, 1), query: query, args: args, m: map[string]any{}}
}

// lockWrite takes the write lock, honouring ctx.
func (st *sharedState) lockWrite(ctx context.Context) error {
	select {
	case st.write <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (st *sharedState) unlockWrite() { <-st.write }

// load reads the state from the database once. The caller holds the write
// lock, so no change is committed between the read and its use.
func (st *sharedState) load(ctx context.Context, db *sql.DB) error {
	st.mu.RLock()
	loaded := st.loaded
	st.mu.RUnlock()
	if loaded {
		return nil
	}
	m, err := readState(ctx, db, st.query, st.args...)
	if err != nil {
		return err
	}
	st.mu.Lock()
	st.m = m
	st.loaded = true
	st.mu.Unlock()
	return nil
}

// ensure loads the state if needed, taking the write lock for it.
func (st *sharedState) ensure(ctx context.Context, db *sql.DB) error {
	st.mu.RLock()
	loaded := st.loaded
	st.mu.RUnlock()
	if loaded {
		return nil
	}
	if err := st.lockWrite(ctx); err != nil {
		return err
	}
	defer st.unlockWrite()
	return st.load(ctx, db)
}

func (st *sharedState) get(k string) (any, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	v, ok := st.m[k]
	return v, ok
}

func (st *sharedState) set(k string, v any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.m[k] = v
}

func (st *sharedState) apply(delta map[string]any) {
	if len(delta) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	maps.Copy(st.m, delta)
}

// copyInto adds the state to dst under prefix.
func (st *sharedState) copyInto(dst map[string]any, prefix string) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for k, v := range st.m {
		dst[prefix+k] = v
	}
}

// readState runs a query returning (state_key, state_value) rows.
func readState(ctx context.Context, q queryer, query string, args ...any) (map[string]any, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	defer rows.Close()
	m := map[string]any{}
	for rows.Next() {
		var k, raw string
		if err := rows.Scan(&k, &raw); err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		v, err := decodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("read state %q: %w", k, err)
		}
		m[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	return m, nil
}
