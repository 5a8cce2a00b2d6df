package main

import (
	"context"
	"log/slog"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/routing"
)

// newAvailability is the model health state a serve or batch process
// shares between its sessions: with cluster.enabled, the fleet's through
// PostgreSQL (compose.OpenAvailability). closeAvail ends the fleet link
// after writing what is still to be shared; it does nothing otherwise.
func newAvailability(ctx context.Context, settings *config.Settings, log *slog.Logger) (avail *routing.Availability, closeAvail func(), err error) {
	avail, closeFn, err := compose.OpenAvailability(ctx, settings, log)
	if err != nil {
		return nil, nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return avail, func() {
		if err := closeFn(); err != nil {
			log.Warn("cluster: closing the model health link", "err", err)
		}
	}, nil
}

// closingToo returns close extended to call also first: a closer list of
// two.
func closingToo(close func() error, also func()) func() error {
	return func() error {
		also()
		return close()
	}
}
