package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/agentry-dev/agentry/cluster"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// checkCluster refuses cluster.enabled without the shared PostgreSQL
// store it needs, and an advertised URL that is not one.
func checkCluster(s *config.Settings) error {
	c := s.Cluster
	if !c.Enabled {
		return nil
	}
	if s.Session.Store != config.SessionStorePostgres || s.Session.PostgresDSN == "" {
		return &inputError{fmt.Sprintf("cluster.enabled needs the replicas' shared database: set session.store to postgres and session.postgresDsn (session.store is %q)", s.Session.Store)}
	}
	if c.AdvertiseURL != "" {
		u, err := url.Parse(c.AdvertiseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return &inputError{fmt.Sprintf("cluster.advertiseUrl is %q: use the base URL the other replicas reach this one at, e.g. http://10.0.0.5:41242", c.AdvertiseURL)}
		}
	}
	return nil
}

// replica is agentry serve's membership of a cluster of replicas; a nil
// *replica is a server on its own.
type replica struct {
	node  *cluster.Node
	store any // the session store
	srv   atomic.Pointer[protocol.Server]
}

// startReplica registers the server as a replica: its contexts' leases,
// the forwarding of requests for others' contexts, and the recovery of
// the tasks replicas that died left unfinished.
func startReplica(ctx context.Context, s *config.Settings, baseURL string, tasks *taskdb.Store, store any, log *slog.Logger) (*replica, error) {
	r := &replica{store: store}
	node, err := cluster.Start(ctx, cluster.Config{
		DSN: s.Session.PostgresDSN, AdvertiseURL: cmpOr(s.Cluster.AdvertiseURL, baseURL), Tasks: tasks, Logger: log,
		MaxMessageBytes: s.A2A.MaxBodyBytes,
		// Subscribers are served from the event log wherever they are.
		SubscribeFromLog: true,
		OnLost: func(ids []string) {
			srv := r.srv.Load()
			if srv == nil {
				return
			}
			// Each eviction waits a little for its runs to end; the
			// watcher that calls OnLost goes on meanwhile.
			for _, id := range ids {
				go srv.Evict(id)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	r.node = node
	if _, err := node.Recover(ctx); err != nil {
		_ = node.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return r, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// session takes the lease of a context whose session this replica starts
// and returns the check that stops its turns once the lease is lost. The
// router has forwarded requests for contexts held elsewhere; this is the
// guard for what it does not route (gRPC, a /ws connection's later
// messages).
func (r *replica) session(ctx context.Context, contextID string) (func() error, error) {
	if r == nil {
		return nil, nil
	}
	o, err := r.node.Acquire(ctx, contextID)
	if err != nil {
		return nil, err
	}
	if !o.Self {
		return nil, fmt.Errorf("context %s is served by replica %s at %s: send its requests there (requests naming the context are forwarded, a /ws connection relayed by its first message; a /ws connection following another context cannot take it)", contextID, o.ReplicaID, o.URL)
	}
	// Another replica may have run the context since this one last
	// loaded its session: read it again from the database.
	if u, ok := r.store.(unloader); ok {
		if err := u.Unload(ctx, runtimeAppName, runtimeUserID, contextID); err != nil {
			return nil, err
		}
	}
	return func() error { return r.node.Confirm(contextID) }, nil
}

// unloader is the session store's Unload (sessions.Store).
type unloader interface {
	Unload(ctx context.Context, appName, userID, sessionID string) error
}

// The ADK app and user of served sessions: runtime.Config's defaults,
// which compose keeps.
const (
	runtimeAppName = "agentry"
	runtimeUserID  = "user"
)

// released gives up a context's lease when its session closes (idle, or
// the server stopping).
func (r *replica) released(sess protocol.Session, contextID string) protocol.Session {
	if r == nil {
		return sess
	}
	return leasedSession{Session: sess, release: func() {
		_ = r.node.Release(context.Background(), contextID)
	}}
}

// leasedSession releases its context's lease when it closes.
type leasedSession struct {
	protocol.Session
	release func()
}

func (s leasedSession) Close() error {
	err := s.Session.Close()
	s.release()
	return err
}

// eventLog is the replica's event log for the protocol server; nil
// without a cluster.
func (r *replica) eventLog() protocol.EventLog {
	if r == nil {
		return nil
	}
	return r.node.Events()
}

// wsRelay is the protocol server's WSRelay: a /ws connection opened
// without contextId whose first message is about a context another
// replica holds is relayed to that replica (once: a relayed connection
// is marked forwarded, and is never relayed again). nil without a
// cluster.
func (r *replica) wsRelay() func(*http.Request, string) (string, http.Header, bool) {
	if r == nil {
		return nil
	}
	return func(req *http.Request, contextID string) (string, http.Header, bool) {
		if req.Header.Get(cluster.ForwardedHeader) != "" {
			return "", nil, false
		}
		o, err := r.node.Acquire(req.Context(), contextID)
		if err != nil || o.Self {
			return "", nil, false
		}
		return o.URL, http.Header{cluster.ForwardedHeader: {r.node.ID()}}, true
	}
}

// handler routes requests to the replica holding their context.
func (r *replica) handler(h http.Handler) http.Handler {
	if r == nil {
		return h
	}
	return r.node.Handler(h)
}

// advertisedHost is the Host the other replicas forward with, which the
// guard must accept.
func (r *replica) advertisedHost() []string {
	if r == nil {
		return nil
	}
	u, err := url.Parse(r.node.URL())
	if err != nil {
		return nil
	}
	return []string{u.Host}
}

// stop releases the replica's leases and leaves the registry.
func (r *replica) stop() {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.node.Stop(ctx)
}
