package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentry-dev/agentry/internal/fakegemini"
	"github.com/agentry-dev/agentry/internal/pgtest"
)

// fleetEnv is one machine of a fleet: its own home, whose settings put
// model health in the fleet's PostgreSQL schema.
func fleetEnv(t *testing.T, srvURL, dsn string) *env {
	t.Helper()
	e := newEnv(t)
	e.set("GEMINI_API_KEY="+fakegemini.DefaultAPIKey, "GOOGLE_GEMINI_BASE_URL="+srvURL)
	settings, _ := json.Marshal(map[string]any{
		"session": map[string]any{"store": "postgres", "postgresDsn": dsn},
		"cluster": map[string]any{"enabled": true},
	})
	// The fallback chain as in TestBatchFallsBackOnce, added to the
	// settings above.
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), strings.TrimSuffix(string(settings), "}")+`, "model": {"fallbackChains": [[
		{"model": "gemini-2.5-pro", "actions": {"terminal": "silent"}},
		{"model": "gemini-2.5-flash", "lastResort": true, "actions": {"terminal": "silent"}}
	]]}}`)
	return e
}

// TestFleetFallsBackOnce: three agentry batch processes, each on its own
// home, share model health through PostgreSQL. The configured model is out
// of daily quota. The first process finds out (one 429) and falls back;
// the two others, started after it and run side by side, never call the
// model: the fleet met the 429 once, where processes on their own would
// each have met it.
func TestFleetFallsBackOnce(t *testing.T) {
	const perProcess = 12
	dsn := pgtest.Schema(t, "fleet", "e2e_fleet_")
	srv := fakegemini.New(t, fakegemini.AllowUnused())
	for range 3 * perProcess {
		srv.EnqueueFor("gemini-2.5-pro", fakegemini.RateLimitPerDay())
		srv.EnqueueFor("gemini-2.5-flash", fakegemini.Text("from flash"))
	}
	batch := func(name string, c int) {
		e := fleetEnv(t, srv.URL, dsn)
		var in []string
		for i := range perProcess {
			in = append(in, request(fmt.Sprintf("%s-%02d", name, i), "hello", ""))
		}
		r := e.run("", "batch", "-m", "gemini-2.5-pro", "-c", fmt.Sprint(c), e.batchInput(in...))
		if r.code != 0 {
			t.Errorf("%s: exit %d\nstderr:\n%s", name, r.code, r.stderr)
			return
		}
		got := results(t, r.stdout)
		for id, res := range got {
			if res["status"] != "success" || res["response"] != "from flash" {
				t.Errorf("%s: %v", id, res)
			}
		}
		if len(got) != perProcess {
			t.Errorf("%s: %d results, want %d", name, len(got), perProcess)
		}
	}
	count := func() (pro, flash int) {
		for _, req := range srv.Requests() {
			switch req.Model {
			case "gemini-2.5-pro":
				pro++
			case "gemini-2.5-flash":
				flash++
			}
		}
		return pro, flash
	}

	// One prompt at a time: the first meets the 429, the others follow
	// the availability it marked.
	batch("a", 1)
	if pro, flash := count(); pro != 1 || flash != perProcess {
		t.Fatalf("after the first process: pro %d (want 1), flash %d (want %d)", pro, flash, perProcess)
	}
	var wg sync.WaitGroup
	for _, name := range []string{"b", "c"} {
		wg.Go(func() { batch(name, 4) })
	}
	wg.Wait()
	if pro, flash := count(); pro != 1 || flash != 3*perProcess {
		t.Errorf("fleet: pro %d (want 1: once for the fleet), flash %d (want %d)", pro, flash, 3*perProcess)
	}
}

// TestFleetNeedsPostgres: cluster.enabled with the default SQLite store is
// a setup error that says what to set.
func TestFleetNeedsPostgres(t *testing.T) {
	e := newEnv(t)
	e.set("GEMINI_API_KEY=" + fakegemini.DefaultAPIKey)
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"cluster": {"enabled": true}}`)
	r := e.run("", "batch", "-m", "gemini-2.5-flash", e.batchInput(request("x", "hello", "")))
	if r.code == 0 || !strings.Contains(r.stderr, "cluster.enabled") || !strings.Contains(r.stderr, "session.store") {
		t.Errorf("batch: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	r = e.run("", "serve", "--port", "0", "-w", e.ws, "-m", "replay:"+quickstart())
	if r.code == 0 || !strings.Contains(r.stderr, "cluster.enabled") || strings.Contains(r.stderr, "listening on") {
		t.Errorf("serve: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	// A server that does not answer is an error, not a hang.
	e.writeFile(filepath.Join(e.home, ".agentry", "settings.json"), `{"cluster": {"enabled": true},
		"session": {"store": "postgres", "postgresDsn": "postgres://agentry@127.0.0.1:1/none?sslmode=disable&connect_timeout=5"}}`)
	r = e.run("", "batch", "-m", "gemini-2.5-flash", e.batchInput(request("x", "hello", "")))
	if r.code == 0 || !strings.Contains(r.stderr, "127.0.0.1") {
		t.Errorf("unreachable DSN: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
