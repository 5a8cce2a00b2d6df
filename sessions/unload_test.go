package sessions

import (
	"slices"
	"testing"
)

// TestUnload: a Store's live object misses what another Store appended to
// the session until Unload, after which Get reads the session again and
// appends go on after the other Store's.
func TestUnload(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		first, second := b.open(t), b.open(t)
		sess := create(t, first, "s1", nil)
		appendEv(t, first, sess, textEvent("e1", "one"))
		appendEv(t, second, get(t, second, "s1"), textEvent("e2", "two"))
		if got := texts(get(t, first, "s1")); !slices.Equal(got, []string{"one"}) {
			t.Fatalf("before Unload the live object has %q, want the first Store's own event only (a test that cannot fail otherwise)", got)
		}
		if err := first.Unload(ctx, testApp, testUser, "s1"); err != nil {
			t.Fatal(err)
		}
		reloaded := get(t, first, "s1")
		if got := texts(reloaded); !slices.Equal(got, []string{"one", "two"}) {
			t.Fatalf("after Unload: %q", got)
		}
		appendEv(t, first, reloaded, textEvent("e3", "three"))
		if got := texts(get(t, b.open(t), "s1")); !slices.Equal(got, []string{"one", "two", "three"}) {
			t.Fatalf("stored: %q", got)
		}
		if err := first.Unload(ctx, testApp, testUser, "never-loaded"); err != nil {
			t.Fatalf("Unload of a session never loaded: %v", err)
		}
	})
}
