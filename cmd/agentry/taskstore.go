package main

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/taskdb"
	"github.com/agentry-dev/agentry/sessions"
)

// openTaskStore keeps A2A tasks and push configs in the session database,
// so a restarted server still answers for finished tasks. With the memory
// session store they live as long as the process.
func openTaskStore(ctx context.Context, store session.Service) (taskstore.Store, push.ConfigStore, error) {
	db, ok := store.(*sessions.Store)
	if !ok {
		return taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: protocol.SingleUser}), push.NewInMemoryStore(), nil
	}
	tasks, err := taskdb.Open(ctx, db.DB(), db.Dialect(), taskdb.WithAuthenticator(protocol.SingleUser), taskdb.WithParkedRuns())
	if err != nil {
		return nil, nil, err
	}
	return tasks, tasks.PushConfigs(), nil
}
