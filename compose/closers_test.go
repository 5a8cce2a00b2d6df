package compose

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
)

// TestClosersCloseNewestFirst: closeAll calls every function newest first,
// joins their errors and forgets them; handOver moves the list to the
// function it returns, leaving nothing for closeAll.
func TestClosersCloseNewestFirst(t *testing.T) {
	var order []int
	var cl closers
	errTwo := errors.New("two failed")
	cl.add(func() error { order = append(order, 1); return nil })
	cl.add(func() error { order = append(order, 2); return errTwo })
	cl.add(func() error { order = append(order, 3); return nil })
	if err := cl.closeAll(); !errors.Is(err, errTwo) {
		t.Errorf("closeAll = %v, want %v", err, errTwo)
	}
	if want := []int{3, 2, 1}; !slices.Equal(order, want) {
		t.Errorf("closed in order %v, want %v", order, want)
	}
	if err := cl.closeAll(); err != nil || len(order) != 3 {
		t.Errorf("a second closeAll = %v, closed %v", err, order)
	}

	order = nil
	cl.add(func() error { order = append(order, 1); return nil })
	cl.add(func() error { order = append(order, 2); return nil })
	owned := cl.handOver()
	if err := cl.closeAll(); err != nil || len(order) != 0 {
		t.Fatalf("closeAll after handOver = %v, closed %v", err, order)
	}
	if err := owned(); err != nil || !slices.Equal(order, []int{2, 1}) {
		t.Errorf("the handed-over closer = %v, closed %v", err, order)
	}
}

// TestFailedBuildDropsTheSession: when a step after the stored session's
// creation fails (here a compression model that does not parse), what
// the build opened is closed: the new, empty session is deleted again and
// the store lists nothing.
func TestFailedBuildDropsTheSession(t *testing.T) {
	s := settingsFor(t)
	s.Session.Path = filepath.Join(t.TempDir(), "sessions.db")
	s.Model.CompressionModel = "no-such-provider:model"
	store, closeStore, err := OpenStore(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	_, err = FromSettings(t.Context(), s, Options{SessionID: "failed-1", Resolver: fixedResolver{B: newScript()}, SessionService: store})
	if !errors.Is(err, runtime.ErrSetup) {
		t.Fatalf("FromSettings = %v, want ErrSetup", err)
	}
	if _, err := runtime.GetSession(t.Context(), store, "failed-1"); !errors.Is(err, runtime.ErrNoSession) {
		t.Errorf("the failed build's session is still stored: %v", err)
	}
}
