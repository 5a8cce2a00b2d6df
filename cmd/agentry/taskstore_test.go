package main

import (
	"path/filepath"
	"testing"

	"google.golang.org/adk/v2/session"

	"github.com/agentry-dev/agentry/protocol/taskdb"
	"github.com/agentry-dev/agentry/sessions"
)

// TestTaskStoreSharesTheSessionDatabase: with the agentry store, tasks
// live in the session database; with the memory store, in memory.
func TestTaskStoreSharesTheSessionDatabase(t *testing.T) {
	st, err := sessions.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tasks, _, err := openTaskStore(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tasks.(*taskdb.Store); !ok {
		t.Errorf("tasks of the sqlite store are kept in %T, want the session database", tasks)
	}
	tasks, _, err = openTaskStore(t.Context(), session.InMemoryService())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tasks.(*taskdb.Store); ok {
		t.Error("tasks of the memory store are kept in a database")
	}
}
