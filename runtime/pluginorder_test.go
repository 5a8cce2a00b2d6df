package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/v2/plugin"
)

// TestPluginOrder pins the one order of a session's own plugins —
// compression, the processor chain, the session guard, loop detection,
// hooks — and that the session assembles them in it, whatever it holds,
// with a driver's plugins last.
func TestPluginOrder(t *testing.T) {
	want := []string{"agentry-compression", "agentry-request-processors", "agentry-session-guard", "agentry-loop-detection", "agentry-hooks"}
	if d := cmp.Diff(want, PluginOrder()); d != "" {
		t.Fatalf("PluginOrder (-want +got):\n%s", d)
	}
	mk := func(name string) *plugin.Plugin {
		p, err := plugin.New(plugin.Config{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := map[string]*plugin.Plugin{}
	for _, name := range []string{"agentry-hooks", "agentry-session-guard", "agentry-compression", "agentry-loop-detection", "agentry-request-processors"} {
		own[name] = mk(name)
	}
	names := func(ps []*plugin.Plugin) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Name()
		}
		return out
	}
	if d := cmp.Diff(append(want, "driver"), names(orderPlugins(own, []*plugin.Plugin{mk("driver")}))); d != "" {
		t.Errorf("all plugins (-want +got):\n%s", d)
	}
	delete(own, "agentry-compression")
	delete(own, "agentry-loop-detection")
	if d := cmp.Diff([]string{"agentry-request-processors", "agentry-session-guard", "agentry-hooks"}, names(orderPlugins(own, nil))); d != "" {
		t.Errorf("without compression and loop detection (-want +got):\n%s", d)
	}
}
