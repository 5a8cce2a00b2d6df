package taskdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/google/uuid"
)

// PushStore is a push.ConfigStore keeping push-notification configs in
// the a2a_push_configs table of a Store's database, with the semantics of
// a2a-go's in-memory store. It is a type of its own, not methods of Store,
// because push.ConfigStore's Get and List clash with taskstore.Store's.
//
// Configs are written through (they change once per subscription, not per
// event) and never logged or put in errors: they hold the client's token
// and credentials. Like a2a-go's store it does not check ownership; a2asrv
// checks that the caller can Get the task before using it.
type PushStore struct {
	db *sql.DB
}

var _ push.ConfigStore = (*PushStore)(nil)

// PushConfigs returns the push-notification config store on the Store's
// database, whose table Open created.
func (s *Store) PushConfigs() *PushStore { return &PushStore{db: s.db} }

// validatePushConfig refuses what a2a-go's in-memory store refuses, with
// its messages.
func validatePushConfig(config *a2a.PushConfig) error {
	if config == nil {
		return errors.New("push config cannot be nil")
	}
	if config.URL == "" {
		return errors.New("push config endpoint cannot be empty")
	}
	if _, err := url.ParseRequestURI(config.URL); err != nil {
		return fmt.Errorf("invalid push config endpoint URL: %w", err)
	}
	return nil
}

// Save implements push.ConfigStore: it stores a copy of config for the
// task, replacing the task's config with the same ID, and returns another.
// A config without ID gets a new time-ordered UUID; TaskID is set to
// taskID. A missing or malformed URL fails with a2a.ErrInvalidParams.
func (p *PushStore) Save(ctx context.Context, taskID a2a.TaskID, config *a2a.PushConfig) (*a2a.PushConfig, error) {
	if err := validatePushConfig(config); err != nil {
		return nil, fmt.Errorf("%w: %w", a2a.ErrInvalidParams, err)
	}
	saved := copyPushConfig(config)
	if saved.ID == "" {
		saved.ID = uuid.Must(uuid.NewV7()).String()
	}
	saved.TaskID = taskID
	data, err := json.Marshal(saved)
	if err != nil {
		return nil, fmt.Errorf("taskdb: push config %s of task %s: encode: %w", saved.ID, taskID, err)
	}
	if _, err := p.db.ExecContext(ctx, `INSERT INTO a2a_push_configs (task_id, config_id, data) VALUES ($1, $2, $3)
		ON CONFLICT (task_id, config_id) DO UPDATE SET data = excluded.data`,
		string(taskID), saved.ID, string(data)); err != nil {
		return nil, fmt.Errorf("taskdb: save push config %s of task %s: %w", saved.ID, taskID, err)
	}
	return copyPushConfig(saved), nil
}

// Get implements push.ConfigStore; a config the task does not have fails
// with push.ErrPushConfigNotFound.
func (p *PushStore) Get(ctx context.Context, taskID a2a.TaskID, configID string) (*a2a.PushConfig, error) {
	var data string
	err := p.db.QueryRowContext(ctx, `SELECT data FROM a2a_push_configs WHERE task_id = $1 AND config_id = $2`, string(taskID), configID).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, push.ErrPushConfigNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("taskdb: get push config %s of task %s: %w", configID, taskID, err)
	}
	return decodePushConfig(taskID, configID, data)
}

// List implements push.ConfigStore: the task's configs by ID (so by
// creation time for generated IDs), an empty slice if it has none.
func (p *PushStore) List(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT config_id, data FROM a2a_push_configs WHERE task_id = $1 ORDER BY config_id`, string(taskID))
	if err != nil {
		return nil, fmt.Errorf("taskdb: list push configs of task %s: %w", taskID, err)
	}
	defer func() { _ = rows.Close() }()
	configs := []*a2a.PushConfig{}
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			return nil, fmt.Errorf("taskdb: list push configs of task %s: %w", taskID, err)
		}
		c, err := decodePushConfig(taskID, id, data)
		if err != nil {
			return nil, err
		}
		configs = append(configs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("taskdb: list push configs of task %s: %w", taskID, err)
	}
	return configs, nil
}

// Delete implements push.ConfigStore; deleting a config that does not
// exist is no error, as in a2a-go's store.
func (p *PushStore) Delete(ctx context.Context, taskID a2a.TaskID, configID string) error {
	if _, err := p.db.ExecContext(ctx, `DELETE FROM a2a_push_configs WHERE task_id = $1 AND config_id = $2`, string(taskID), configID); err != nil {
		return fmt.Errorf("taskdb: delete push config %s of task %s: %w", configID, taskID, err)
	}
	return nil
}

// DeleteAll implements push.ConfigStore: it removes every config of the
// task.
func (p *PushStore) DeleteAll(ctx context.Context, taskID a2a.TaskID) error {
	if _, err := p.db.ExecContext(ctx, `DELETE FROM a2a_push_configs WHERE task_id = $1`, string(taskID)); err != nil {
		return fmt.Errorf("taskdb: delete push configs of task %s: %w", taskID, err)
	}
	return nil
}

// decodePushConfig reads a stored config. encoding/json's errors name a
// character or a type, never a value, so they cannot leak the token.
func decodePushConfig(taskID a2a.TaskID, configID, data string) (*a2a.PushConfig, error) {
	var c a2a.PushConfig
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return nil, fmt.Errorf("taskdb: push config %s of task %s: decode: %w", configID, taskID, err)
	}
	return &c, nil
}

// copyPushConfig copies a config; Auth is its only reference.
func copyPushConfig(c *a2a.PushConfig) *a2a.PushConfig {
	cp := *c
	if c.Auth != nil {
		auth := *c.Auth
		cp.Auth = &auth
	}
	return &cp
}
