package taskdb_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

func TestPushConfigs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db, dialect := b.connect(t)
		var logged bytes.Buffer
		s := openOn(t, db, dialect, taskdb.WithLogger(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		ps := s.PushConfigs()
		ctx := context.Background()
		task := a2a.NewTaskID()

		// An ID is generated, the task id set, and the caller's config
		// left alone.
		in := &a2a.PushConfig{URL: "https://client.example.com/hook", Token: "secret-token",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret-credentials"}}
		saved, err := ps.Save(ctx, task, in)
		if err != nil {
			t.Fatalf("Save: %v", err)
		}
		if saved.ID == "" || saved.TaskID != task || in.ID != "" || in.TaskID != "" {
			t.Fatalf("Save = %+v (input now %+v), want a new ID and the task id on the copy only", saved, in)
		}
		want := *saved
		auth := *saved.Auth
		want.Auth = &auth
		saved.Auth.Credentials = "changed"
		got, err := ps.Get(ctx, task, want.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("Get (-want +got):\n%s", diff)
		}

		// A client-chosen ID, then the same ID again: replaced.
		mine := &a2a.PushConfig{ID: "mine", URL: "https://client.example.com/a"}
		if _, err := ps.Save(ctx, task, mine); err != nil {
			t.Fatal(err)
		}
		mine.URL = "https://client.example.com/b"
		if _, err := ps.Save(ctx, task, mine); err != nil {
			t.Fatal(err)
		}
		if got, err := ps.Get(ctx, task, "mine"); err != nil || got.URL != "https://client.example.com/b" {
			t.Errorf("Get after replacing = %+v, %v", got, err)
		}
		// Another task's config with the same ID is another config.
		otherTask := a2a.NewTaskID()
		if _, err := ps.Save(ctx, otherTask, &a2a.PushConfig{ID: "mine", URL: "https://other.example.com/"}); err != nil {
			t.Fatal(err)
		}

		// A second Store on the database sees them: they are written.
		list, err := openOn(t, db, dialect, taskdb.WithoutRecovery()).PushConfigs().List(ctx, task)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(list) != 2 {
			t.Fatalf("List = %d configs, want 2", len(list))
		}
		byID := map[string]*a2a.PushConfig{}
		for _, c := range list {
			byID[c.ID] = c
		}
		if diff := cmp.Diff(&want, byID[want.ID]); diff != "" {
			t.Errorf("listed config (-want +got):\n%s", diff)
		}
		if byID["mine"] == nil || byID["mine"].TaskID != task {
			t.Errorf("listed configs = %v", byID)
		}

		if _, err := ps.Get(ctx, task, "nope"); !errors.Is(err, push.ErrPushConfigNotFound) {
			t.Errorf("Get(unknown config) = %v, want ErrPushConfigNotFound", err)
		}
		if _, err := ps.Get(ctx, a2a.NewTaskID(), want.ID); !errors.Is(err, push.ErrPushConfigNotFound) {
			t.Errorf("Get(unknown task) = %v, want ErrPushConfigNotFound", err)
		}
		if empty, err := ps.List(ctx, a2a.NewTaskID()); err != nil || empty == nil || len(empty) != 0 {
			t.Errorf("List(unknown task) = %#v, %v; want an empty slice", empty, err)
		}

		if err := ps.Delete(ctx, task, "mine"); err != nil {
			t.Fatal(err)
		}
		if err := ps.Delete(ctx, task, "mine"); err != nil {
			t.Errorf("Delete of a deleted config = %v, want nil", err)
		}
		if _, err := ps.Get(ctx, task, "mine"); !errors.Is(err, push.ErrPushConfigNotFound) {
			t.Errorf("Get after Delete = %v", err)
		}
		if list, _ := ps.List(ctx, task); len(list) != 1 {
			t.Errorf("List after Delete = %d configs, want 1", len(list))
		}
		if err := ps.DeleteAll(ctx, task); err != nil {
			t.Fatal(err)
		}
		if list, _ := ps.List(ctx, task); len(list) != 0 {
			t.Errorf("List after DeleteAll = %d configs, want 0", len(list))
		}
		if err := ps.DeleteAll(ctx, task); err != nil {
			t.Errorf("DeleteAll of nothing = %v", err)
		}
		if _, err := ps.Get(ctx, otherTask, "mine"); err != nil {
			t.Errorf("DeleteAll removed another task's config: %v", err)
		}

		if bytes.Contains(logged.Bytes(), []byte("secret")) {
			t.Errorf("a push config's secret was logged:\n%s", logged.String())
		}
	})
}

func TestPushConfigValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ps := b.open(t).PushConfigs()
		ctx := context.Background()
		task := a2a.NewTaskID()
		for name, c := range map[string]*a2a.PushConfig{
			"nil":      nil,
			"no URL":   {Token: "t"},
			"bad URL":  {URL: "not a url"},
			"relative": {URL: "hooks/a2a"},
		} {
			if _, err := ps.Save(ctx, task, c); !errors.Is(err, a2a.ErrInvalidParams) {
				t.Errorf("Save(%s) = %v, want ErrInvalidParams", name, err)
			}
		}
		if list, err := ps.List(ctx, task); err != nil || len(list) != 0 {
			t.Errorf("refused configs were stored: %v, %v", list, err)
		}
	})
}
