package sessions

import (
	"testing"

	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/sessiontestsuite"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// suiteOptions: agentry names its sessions (--session-id), and event ids
// are the caller's.
func suiteOptions() sessiontestsuite.SuiteOptions {
	return sessiontestsuite.SuiteOptions{SupportsUserProvidedSessionID: true}
}

// TestConformance runs ADK's session service suite on both backends; each
// of its cases gets a fresh database.
func TestConformance(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		sessiontestsuite.RunServiceTests(t, suiteOptions(), func(t *testing.T) session.Service {
			return sqliteBackend(t).open(t)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.DSN(t, "session store")
		sessiontestsuite.RunServiceTests(t, suiteOptions(), func(t *testing.T) session.Service {
			return postgresBackend(t).open(t)
		})
	})
}
