package compose

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/runtime"
)

// unreachableDSN names a PostgreSQL server nobody listens on: opening a
// fleet link to it fails, so a test that gets no error opened none.
const unreachableDSN = "postgres://agentry@127.0.0.1:1/none?sslmode=disable&connect_timeout=5"

// TestOpenAvailabilityWithoutCluster: with cluster.enabled off the state is
// the process's own, whatever session.postgresDsn says: nothing is
// connected (the DSN is unreachable), no fleet limiter is set, and close
// does nothing.
func TestOpenAvailabilityWithoutCluster(t *testing.T) {
	s := settingsFor(t)
	s.Session.Store, s.Session.PostgresDSN = config.SessionStorePostgres, unreachableDSN
	s.Cluster.ModelLimits = map[string]config.ModelLimit{"gemini-2.5-flash": {MaxConcurrent: 1}}
	avail, closeAvail, err := OpenAvailability(t.Context(), s, nil)
	if err != nil {
		t.Fatalf("OpenAvailability = %v, want the process's own state", err)
	}
	if avail == nil || avail.Limiter() != nil {
		t.Errorf("availability %v, limiter %v: want a local state without a fleet limiter", avail, avail.Limiter())
	}
	if err := closeAvail(); err != nil {
		t.Errorf("close = %v", err)
	}
}

// TestOpenAvailabilitySetupErrors: with cluster.enabled, settings that
// cannot share model health are setup errors that name what to set, found
// before any connection is tried.
func TestOpenAvailabilitySetupErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*config.Settings)
		want   string
	}{
		{"sqlite store", func(s *config.Settings) { s.Session.Store = config.SessionStoreSQLite }, "session.store"},
		{"no DSN", func(s *config.Settings) { s.Session.PostgresDSN = "" }, "session.postgresDsn"},
		{"negative limit", func(s *config.Settings) {
			s.Cluster.ModelLimits = map[string]config.ModelLimit{"gemini-2.5-pro": {RequestsPerMinute: -1}}
		}, `cluster.modelLimits["gemini-2.5-pro"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := settingsFor(t)
			s.Cluster.Enabled = true
			s.Session.Store, s.Session.PostgresDSN = config.SessionStorePostgres, unreachableDSN
			tc.mutate(s)
			_, _, err := OpenAvailability(t.Context(), s, nil)
			if !errors.Is(err, runtime.ErrSetup) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenAvailability = %v, want ErrSetup naming %s", err, tc.want)
			}
		})
	}
}

// TestGivenAvailabilityOpensNoFleetLink: with cluster.enabled, a session
// given the process's Availability (serve's, a batch's, a parent's) opens
// no fleet link of its own; one built without it opens its own, here
// refused because the settings cannot share model health.
func TestGivenAvailabilityOpensNoFleetLink(t *testing.T) {
	s := settingsFor(t)
	s.Cluster.Enabled = true // with the default SQLite store: no link can be opened
	sess, err := FromSettings(t.Context(), s, Options{Resolver: fixedResolver{B: newScript()}, Availability: routing.NewAvailability()})
	if err != nil {
		t.Fatalf("FromSettings with an Availability = %v", err)
	}
	sess.Close()
	if _, err := FromSettings(t.Context(), s, Options{Resolver: fixedResolver{B: newScript()}}); !errors.Is(err, runtime.ErrSetup) || !strings.Contains(err.Error(), "cluster.enabled") {
		t.Errorf("FromSettings without an Availability = %v, want the fleet link's setup error", err)
	}
}
