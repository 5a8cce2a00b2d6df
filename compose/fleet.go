package compose

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
	"github.com/agentry-dev/agentry/routing/fleethealth"
	"github.com/agentry-dev/agentry/runtime"
)

// OpenAvailability returns the model health state a process shares
// between its sessions. With cluster.enabled it is shared with the fleet
// through session.postgresDsn (routing/fleethealth): terminal failures go
// to every process, and cluster.modelLimits cap the calls to a model
// across the fleet; close ends that link. Without it the state is the
// process's own and close does nothing. A setup error says what to set.
func OpenAvailability(ctx context.Context, s *config.Settings, log *slog.Logger) (avail *routing.Availability, close func() error, err error) {
	if !s.Cluster.Enabled {
		return routing.NewAvailability(), func() error { return nil }, nil
	}
	if log == nil {
		log = slog.Default()
	}
	if s.Session.Store != config.SessionStorePostgres {
		return nil, nil, fmt.Errorf("%w: cluster.enabled shares model health through PostgreSQL, but session.store is %q: set session.store to postgres and session.postgresDsn (or turn cluster.enabled off)", runtime.ErrSetup, s.Session.Store)
	}
	if s.Session.PostgresDSN == "" {
		return nil, nil, fmt.Errorf("%w: cluster.enabled needs session.postgresDsn, which is empty; set it (or AGENTRY_SESSION_POSTGRESDSN) to a connection string such as postgres://user@127.0.0.1:5432/agentry", runtime.ErrSetup)
	}
	limits := make(map[string]fleethealth.Limit, len(s.Cluster.ModelLimits))
	for m, l := range s.Cluster.ModelLimits {
		if l.MaxConcurrent < 0 || l.RequestsPerMinute < 0 {
			return nil, nil, fmt.Errorf("%w: cluster.modelLimits[%q]: maxConcurrent and requestsPerMinute must not be negative (0 is no limit)", runtime.ErrSetup, m)
		}
		limits[m] = fleethealth.Limit{MaxConcurrent: l.MaxConcurrent, RequestsPerMinute: l.RequestsPerMinute}
	}
	h, err := fleethealth.Open(ctx, s.Session.PostgresDSN, fleethealth.WithLimits(limits), fleethealth.WithLogger(log))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: cluster.enabled: model health through session.postgresDsn: %w", runtime.ErrSetup, err)
	}
	avail = routing.NewAvailability(routing.WithShared(h), routing.WithLimiter(h), routing.WithQuotaTTL(fleethealth.DefaultQuotaTTL))
	return avail, h.Close, nil
}
