package mcpauth

import (
	"time"
)

// State is a stored token's state, as `agentry mcp list` shows it.
type State string

// The states of a stored token.
const (
	// StateNone: no token is stored.
	StateNone State = "none"
	// StateValid: the token is not about to expire.
	StateValid State = "valid"
	// StateExpired: the token expired (or expires within five minutes)
	// and has no refresh token.
	StateExpired State = "expired"
	// StateRefreshable: the token expired but will be refreshed on use.
	StateRefreshable State = "expired (refreshable)"
	// StateInvalid: the token file does not parse or is refused.
	StateInvalid State = "invalid"
)

// Status is what is known of a server's stored token without using it.
type Status struct {
	// State is the token's state.
	State State `json:"state"`
	// Expires is when the token expires; zero when unknown or none.
	Expires time.Time `json:"expires,omitzero"`
	// Path is the token file.
	Path string `json:"path"`
	// Problem explains StateInvalid.
	Problem string `json:"problem,omitempty"`
}

// Status reports server's stored token's state at now. It never
// refreshes or deletes anything.
func (s *Store) Status(server string, now time.Time) Status {
	st := Status{State: StateNone, Path: s.Path(server)}
	t, err := s.Load(server)
	switch {
	case err != nil:
		st.State, st.Problem = StateInvalid, err.Error()
	case t == nil:
	case expiring(t, now) && t.Token.RefreshToken != "" && t.TokenURL != "":
		st.State, st.Expires = StateRefreshable, t.Expiry()
	case expiring(t, now):
		st.State, st.Expires = StateExpired, t.Expiry()
	default:
		st.State, st.Expires = StateValid, t.Expiry()
	}
	return st
}
