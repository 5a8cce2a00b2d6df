package sessions

import (
	"iter"
	"maps"
	"strings"
	"sync"
	"time"

	"google.golang.org/adk/v2/session"
)

// storedSession is the session.Session the Store hands out. The live object
// of a session is also the Store's entry for it (op, refs, loaded, gone);
// a copy, from a filtered Get or List, has none of that and no shared
// state: its state is a merged snapshot, as ADK's services return.
type storedSession struct {
	key key

	// Entry fields, live objects only. op is the operation lock (a
	// channel so waiting honours contexts); refs, loaded and gone are
	// guarded by Store.mu and written only with op held too.
	op     chan struct{}
	refs   int
	loaded bool
	gone   bool

	mu sync.RWMutex // guards the fields below
	// app and user are the shared app and user state (live objects,
	// once loaded); nil in a copy.
	app, user *sharedState
	// events is replaced, never written in place, when an event is
	// replaced, so a reader holding an old slice never races a writer;
	// appends only write past every reader's length.
	events []*session.Event
	// idx maps event ids to positions in events (live objects).
	idx map[string]int
	// state holds the session's own and temp: keys in a live object,
	// and the merged state in a copy.
	state   map[string]any
	updated time.Time
}

var _ session.Session = (*storedSession)(nil)

// newEntry returns an unloaded entry for a session.
func newEntry(k key) *storedSession {
	return &storedSession{key: k, op: make(chan struct{}, 1)}
}

// ID returns the session id.
func (s *storedSession) ID() string { return s.key.id }

// AppName returns the app's name.
func (s *storedSession) AppName() string { return s.key.app }

// UserID returns the user's id.
func (s *storedSession) UserID() string { return s.key.user }

// State returns the session state. In a live object "app:" and "user:"
// keys read and write the state shared with the app's and user's other
// live sessions. As in ADK, Set changes memory only; state reaches
// storage through an appended event's StateDelta.
func (s *storedSession) State() session.State { return stateView{s} }

// Events returns the events as of the call.
func (s *storedSession) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return eventList(s.events)
}

// LastUpdateTime returns the time of the last append.
func (s *storedSession) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// stateView is a session's session.State.
type stateView struct{ s *storedSession }

// shared returns the shared state a key belongs to and the key without
// its prefix, or nil for the session's own keys and for copies.
func (v stateView) shared(k string) (*sharedState, string) {
	v.s.mu.RLock()
	app, user := v.s.app, v.s.user
	v.s.mu.RUnlock()
	if app == nil {
		return nil, k
	}
	if rest, ok := strings.CutPrefix(k, session.KeyPrefixApp); ok {
		return app, rest
	}
	if rest, ok := strings.CutPrefix(k, session.KeyPrefixUser); ok {
		return user, rest
	}
	return nil, k
}

// Get returns the value of key k, or session.ErrStateKeyNotExist.
func (v stateView) Get(k string) (any, error) {
	var (
		val any
		ok  bool
	)
	if st, rest := v.shared(k); st != nil {
		val, ok = st.get(rest)
	} else {
		v.s.mu.RLock()
		val, ok = v.s.state[k]
		v.s.mu.RUnlock()
	}
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return val, nil
}

// Set sets key k in memory.
func (v stateView) Set(k string, val any) error {
	if st, rest := v.shared(k); st != nil {
		st.set(rest, val)
		return nil
	}
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if v.s.state == nil {
		v.s.state = map[string]any{}
	}
	v.s.state[k] = val
	return nil
}

// All iterates over a snapshot of the state taken when All is called.
func (v stateView) All() iter.Seq2[string, any] {
	snap := v.s.mergedState(true)
	return maps.All(snap)
}

// mergedState returns the whole state as one map: the session's keys, and
// in a live object the app: and user: keys, and the temp: keys if withTemp.
func (s *storedSession) mergedState(withTemp bool) map[string]any {
	s.mu.RLock()
	app, user := s.app, s.user
	m := make(map[string]any, len(s.state))
	for k, v := range s.state {
		if withTemp || !strings.HasPrefix(k, session.KeyPrefixTemp) {
			m[k] = v
		}
	}
	s.mu.RUnlock()
	if app != nil {
		app.copyInto(m, session.KeyPrefixApp)
		user.copyInto(m, session.KeyPrefixUser)
	}
	return m
}

// dropTemp removes the temp: keys of the previous invocation.
func (s *storedSession) dropTemp() {
	s.mu.RLock()
	found := false
	for k := range s.state {
		if strings.HasPrefix(k, session.KeyPrefixTemp) {
			found = true
			break
		}
	}
	s.mu.RUnlock()
	if !found {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.state, func(k string, _ any) bool { return strings.HasPrefix(k, session.KeyPrefixTemp) })
}

// eventList is a session's session.Events: a snapshot of its event slice.
type eventList []*session.Event

// All iterates over the events in order.
func (e eventList) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

// Len returns the number of events.
func (e eventList) Len() int { return len(e) }

// At returns the i-th event, or nil if i is out of range.
func (e eventList) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}
