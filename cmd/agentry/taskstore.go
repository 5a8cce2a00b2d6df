package main

import (
	"context"
	"database/sql"

	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/taskdb"
)

// sqlStore is a session store kept in a SQL database (the agentry
// store, SQLite or PostgreSQL), which the task store can share.
type sqlStore interface {
	// DB is the store's database.
	DB() *sql.DB
	// Dialect is "sqlite" or "postgres".
	Dialect() string
}

// openTaskStore keeps A2A tasks and push configs in the session database,
// so a restarted server still answers for finished tasks. With the memory
// session store they live as long as the process.
func openTaskStore(ctx context.Context, store sessionStore, opts ...taskdb.Option) (taskstore.Store, push.ConfigStore, error) {
	db, ok := store.(sqlStore)
	if !ok {
		return taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: protocol.SingleUser}), push.NewInMemoryStore(), nil
	}
	tasks, err := taskdb.Open(ctx, db.DB(), db.Dialect(), append([]taskdb.Option{taskdb.WithAuthenticator(protocol.SingleUser), taskdb.WithParkedRuns()}, opts...)...)
	if err != nil {
		return nil, nil, err
	}
	return tasks, tasks.PushConfigs(), nil
}
