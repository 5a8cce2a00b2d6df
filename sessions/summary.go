package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/sessions/listing"
)

// Summary is what a listing shows of a stored session, read without
// loading the session's events.
type Summary = listing.Summary

// Summaries returns a summary of each session of appName and userID,
// oldest first (by creation, then id). It reads the text of the user's
// events, which are few, and only counts the others.
func (s *Store) Summaries(ctx context.Context, appName, userID string) ([]Summary, error) {
	if appName == "" || userID == "" {
		return nil, fmt.Errorf("sessions: summaries: app name and user id are required, got %q and %q", appName, userID)
	}
	where, args := "app_name = $1 AND user_id = $2", []any{appName, userID}
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, create_time, update_time FROM sessions WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	byKey := map[key]*storedSession{}
	byID := map[string]*Summary{}
	var out []*Summary
	for rows.Next() {
		var (
			id               string
			created, updated int64
		)
		if err := rows.Scan(&id, &created, &updated); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sessions: summaries: %w", err)
		}
		sum := &Summary{ID: id, Created: time.UnixMicro(created), Updated: time.UnixMicro(updated)}
		out = append(out, sum)
		byID[id] = sum
		byKey[key{appName, userID, id}] = &storedSession{state: map[string]any{}}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	if err := s.listState(ctx, where, args, byKey); err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	for k, c := range byKey {
		byID[k.id].State = c.state
	}
	err = s.updateTimes(ctx, where, args, func(k key, last int64) {
		if sum := byID[k.id]; sum != nil && last > sum.Updated.UnixMicro() {
			sum.Updated = time.UnixMicro(last)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}

	rows, err = s.db.QueryContext(ctx, `SELECT session_id, timestamp_us, data FROM events WHERE `+where+` AND author = 'user' ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	for rows.Next() {
		var (
			id, data string
			at       int64
		)
		if err := rows.Scan(&id, &at, &data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sessions: summaries: %w", err)
		}
		sum := byID[id]
		if sum == nil {
			continue // created after the session query
		}
		var ev struct {
			Content *genai.Content `json:"content"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sessions: summaries: event of %s: %w", id, err)
		}
		sum.AddUserEvent(time.UnixMicro(at), ev.Content)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}

	rows, err = s.db.QueryContext(ctx, `SELECT session_id, COUNT(*) FROM events WHERE `+where+` AND author <> 'user' GROUP BY session_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			n  int
		)
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("sessions: summaries: %w", err)
		}
		if sum := byID[id]; sum != nil {
			sum.Replies = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: summaries: %w", err)
	}
	slices.SortStableFunc(out, func(a, b *Summary) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	res := make([]Summary, len(out))
	for i, sum := range out {
		res[i] = *sum
	}
	return res, nil
}
