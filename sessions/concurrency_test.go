package sessions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/session"
)

// TestConcurrentUse appends to, reads and rewrites several sessions from
// many goroutines at once (run it with -race), then checks that every
// append landed once, in each appender's order, and that storage agrees
// with the live objects.
func TestConcurrentUse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		const (
			sessions  = 4
			appenders = 2 // per session
			perWriter = 25
		)
		ctx := context.Background()
		s := b.open(t)
		ids := make([]string, sessions)
		for i := range ids {
			ids[i] = fmt.Sprintf("s%d", i)
			create(t, s, ids[i], nil)
		}

		var writers, others sync.WaitGroup
		var done atomic.Bool
		var replaced atomic.Int64
		fail := make(chan error, 100)
		report := func(err error) {
			select {
			case fail <- err:
			default:
			}
		}
		for _, id := range ids {
			for w := range appenders {
				writers.Go(func() {
					for i := range perWriter {
						sess, err := s.Get(ctx, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id})
						if err != nil {
							report(err)
							return
						}
						ev := textEvent(fmt.Sprintf("%s-w%d-%03d", id, w, i), "original")
						ev.Actions.StateDelta = map[string]any{
							fmt.Sprintf("w%d", w): float64(i), "app:last": id, "user:last": float64(i), "temp:x": i,
						}
						if err := s.AppendEvent(ctx, sess.Session, ev); err != nil {
							report(err)
							return
						}
					}
				})
			}
			// A masker: rewrites random events of the session.
			others.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(len(id)), 7))
				for !done.Load() {
					sess, err := s.Get(ctx, &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id})
					if err != nil {
						report(err)
						return
					}
					evs := sess.Session.Events()
					if evs.Len() == 0 {
						continue
					}
					ev := evs.At(rng.IntN(evs.Len()))
					c := genai.NewContentFromText("masked "+ev.ID, genai.RoleModel)
					if err := s.ReplaceEventContent(ctx, testApp, testUser, id, ev.ID, c); err != nil {
						report(err)
						return
					}
					replaced.Add(1)
				}
			})
		}
		// Readers: whole sessions, filtered copies, state.
		for r := range 3 {
			others.Go(func() {
				for i := 0; !done.Load(); i++ {
					id := ids[(i+r)%sessions]
					req := &session.GetRequest{AppName: testApp, UserID: testUser, SessionID: id}
					if i%2 == 1 {
						req.NumRecentEvents = 3
					}
					resp, err := s.Get(ctx, req)
					if err != nil {
						report(err)
						return
					}
					for ev := range resp.Session.Events().All() {
						if ev.Content == nil || len(ev.Content.Parts) != 1 {
							report(fmt.Errorf("event %s has content %v", ev.ID, ev.Content))
						}
					}
					for range resp.Session.State().All() {
					}
					_, _ = resp.Session.State().Get("app:last")
					if _, err := s.List(ctx, &session.ListRequest{AppName: testApp, UserID: testUser}); err != nil {
						report(err)
					}
				}
			})
		}
		writers.Wait()
		done.Store(true)
		others.Wait()
		close(fail)
		for err := range fail {
			t.Error(err)
		}
		if replaced.Load() == 0 {
			t.Error("no replacement ran concurrently with the appends")
		}

		r := b.open(t)
		for _, id := range ids {
			live := get(t, s, id)
			if n := live.Events().Len(); n != appenders*perWriter {
				t.Errorf("%s: %d events, want %d", id, n, appenders*perWriter)
			}
			// Each appender's events are in its order.
			for w := range appenders {
				prefix := fmt.Sprintf("%s-w%d-", id, w)
				var got []string
				for ev := range live.Events().All() {
					if len(ev.ID) > len(prefix) && ev.ID[:len(prefix)] == prefix {
						got = append(got, ev.ID)
					}
				}
				if !slices.IsSorted(got) || len(got) != perWriter {
					t.Errorf("%s: appender %d's events %v", id, w, got)
				}
			}
			stored := get(t, r, id)
			if d := cmp.Diff(slices.Collect(live.Events().All()), slices.Collect(stored.Events().All())); d != "" {
				t.Errorf("%s: stored events differ from the live object (-live +stored):\n%s", id, d)
			}
			for w := range appenders {
				k := fmt.Sprintf("w%d", w)
				if v, _ := stored.State().Get(k); v != float64(perWriter-1) {
					t.Errorf("%s: stored state %s = %v, want %d", id, k, v, perWriter-1)
				}
			}
		}
	})
}
