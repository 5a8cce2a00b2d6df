package runtime

import (
	"context"
	"fmt"
	"log/slog"

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
