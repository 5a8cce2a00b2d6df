package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestStreamQueueRunsInOrder: streams added from many goroutines run one
// at a time, in the order they were added, each after the Add that queued it has returned, and each
// stream's context ends when its run returns.
func TestStreamQueueRunsInOrder(t *testing.T) {
	q := NewStreamQueue(t.Context(), nil)
	t.Cleanup(func() { q.Close() })
	var mu sync.Mutex
	var order, added []string
	running := 0
	var wg sync.WaitGroup
	done := make(chan struct{}, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%d", i)
			// The lock is held across Add, so the run (which takes it
			// too) cannot start before Add has returned and the id is
			// recorded as added.
			mu.Lock()
			err := q.Add(id, func(ctx context.Context, _ context.CancelCauseFunc) {
				mu.Lock()
				running++
				if running != 1 {
					t.Errorf("%d streams running at once", running)
				}
				if !slices.Contains(added, id) {
					t.Errorf("stream %s ran before its Add returned", id)
				}
				order = append(order, id)
				running--
				mu.Unlock()
				go func() { <-ctx.Done(); done <- struct{}{} }()
			})
			if err != nil {
				t.Error(err)
			}
			added = append(added, id)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for range 20 {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, added) {
		t.Errorf("streams ran in the order %v, were added in the order %v", order, added)
	}
}

// TestStreamQueueAbort: Abort cancels the running stream and the queued
// ones with its cause; AbortStream cancels one only; Close aborts with
// ErrClosed, waits for the running stream, and refuses later streams.
func TestStreamQueueAbort(t *testing.T) {
	q := NewStreamQueue(t.Context(), nil)
	started := make(chan struct{})
	causes := make(chan error, 4)
	block := func(ctx context.Context, _ context.CancelCauseFunc) {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
	}
	record := func(ctx context.Context, _ context.CancelCauseFunc) { causes <- context.Cause(ctx) }
	if err := q.Add("a", block); err != nil {
		t.Fatal(err)
	}
	<-started
	for _, id := range []string{"b", "c"} {
		if err := q.Add(id, record); err != nil {
			t.Fatal(err)
		}
	}
	errTimeLimit := errors.New("time limit reached")
	q.AbortStream("b", errTimeLimit)
	q.Abort(nil)
	want := []error{ErrAborted, errTimeLimit, ErrAborted}
	for i, w := range want {
		if got := <-causes; !errors.Is(got, w) {
			t.Errorf("stream %d ended with %v, want %v", i, got, w)
		}
	}
	if err := q.Add("d", record); err != nil {
		t.Fatal(err)
	}
	if got := <-causes; got != nil {
		t.Errorf("a stream added after the abort started cancelled: %v", got)
	}
	if !q.Close() || q.Close() {
		t.Error("Close reported the wrong call as the closing one")
	}
	if err := q.Add("e", record); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
	if !errors.Is(context.Cause(q.Context()), ErrClosed) {
		t.Errorf("the queue's context ended with %v", context.Cause(q.Context()))
	}
}

// TestStreamQueueHold: Hold fails while a stream runs, waits for one
// marked ended, and keeps streams added meanwhile until release.
func TestStreamQueueHold(t *testing.T) {
	q := NewStreamQueue(t.Context(), nil)
	t.Cleanup(func() { q.Close() })
	proceed, marked := make(chan struct{}), make(chan struct{})
	if err := q.Add("a", func(ctx context.Context, _ context.CancelCauseFunc) {
		<-proceed
		q.MarkEnded()
		close(marked)
		<-proceed
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Hold(t.Context()); !errors.Is(err, ErrBusy) {
		t.Fatalf("Hold while a stream runs: %v, want ErrBusy", err)
	}
	proceed <- struct{}{}
	<-marked
	held := make(chan func())
	go func() {
		release, err := q.Hold(t.Context())
		if err != nil {
			t.Error(err)
		}
		held <- release
	}()
	proceed <- struct{}{}
	release := <-held
	ran := make(chan struct{})
	if err := q.Add("b", func(context.Context, context.CancelCauseFunc) { close(ran) }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
		t.Fatal("a stream ran while the queue was held")
	default:
	}
	release()
	<-ran
}
