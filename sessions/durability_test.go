package sessions

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"
)

// The child role of TestDurabilityUnderSIGKILL is chosen by these
// variables: the database file and the trial number.
const (
	crashDBEnv    = "AGENTRY_SESSIONS_CRASH_DB"
	crashTrialEnv = "AGENTRY_SESSIONS_CRASH_TRIAL"
)

const (
	crashApp      = "crash"
	crashSessions = 2 // per trial, appended to concurrently
	// crashTrials is the minimum; each takes some 50 ms.
	crashTrials = 200
)

// crashPayload is event i's text; sizes vary from 100 B to 8 KB so that
// events straddle SQLite pages and overflow pages.
func crashPayload(sid string, i int) string {
	n := 100 + (i*1237)%8000
	unit := fmt.Sprintf("%s/%d;", sid, i)
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

func crashMasked(sid string, i int) string { return fmt.Sprintf("<masked %s/%d>", sid, i) }

func crashEventID(sid string, i int) string { return fmt.Sprintf("%s-%06d", sid, i) }

// crashDelta is event i's state change. Even events change the session's
// and the user's state, so they are stored in a transaction with their
// state; odd ones only a temp: key, which is not stored, so they are
// stored in one statement (see Store.AppendEvent).
func crashDelta(sid string, i int) map[string]any {
	if i%2 == 1 {
		return map[string]any{"temp:scratch": i}
	}
	return map[string]any{"n": float64(i), "user:last-" + sid: float64(i), "temp:scratch": i}
}

// crashStored is the state change stored with event i: its delta without
// the temp: key.
func crashStored(sid string, i int) map[string]any {
	d := crashDelta(sid, i)
	delete(d, "temp:scratch")
	return d
}

// TestCrashChild is the child process of TestDurabilityUnderSIGKILL: it
// appends to crashSessions sessions until it is killed, printing each
// acknowledged operation after it returned. Run alone it skips.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("the child process of TestDurabilityUnderSIGKILL")
	}
	trial, _ := strconv.Atoi(os.Getenv(crashTrialEnv))
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		// One write per line, unbuffered: once written it is in the
		// pipe and survives the SIGKILL.
		_, _ = fmt.Fprintf(os.Stdout, format+"\n", args...)
	}
	fail := func(err error) {
		say("error %v", err)
		os.Exit(3)
	}
	ctx := context.Background()
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		fail(err)
	}
	var live []session.Session
	for n := range crashSessions {
		sid := fmt.Sprintf("t%03d-%c", trial, 'a'+n)
		resp, err := s.Create(ctx, &session.CreateRequest{AppName: crashApp, UserID: "u", SessionID: sid})
		if err != nil {
			fail(err)
		}
		say("created %s", sid)
		live = append(live, resp.Session)
	}
	say("ready")
	// A bound, in case the parent dies before it kills us.
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	for _, sess := range live {
		wg.Go(func() {
			sid := sess.ID()
			for i := 0; time.Now().Before(deadline); i++ {
				ev := &session.Event{
					ID: crashEventID(sid, i), InvocationID: "inv", Author: "model", Timestamp: time.Now(),
					LLMResponse: model.LLMResponse{Content: genai.NewContentFromText(crashPayload(sid, i), genai.RoleModel)},
					Actions:     session.EventActions{StateDelta: crashDelta(sid, i)},
				}
				if err := s.AppendEvent(ctx, sess, ev); err != nil {
					fail(err)
				}
				say("ack %s %d", sid, i)
				// Mask an earlier event now and then, as the masker does.
				if i%5 == 4 {
					j := i - 2
					c := genai.NewContentFromText(crashMasked(sid, j), genai.RoleModel)
					if err := s.ReplaceEventContent(ctx, crashApp, "u", sid, crashEventID(sid, j), c); err != nil {
						fail(err)
					}
					say("rep %s %d", sid, j)
				}
			}
		})
	}
	wg.Wait()
	os.Exit(0)
}

// crashLog is what a child acknowledged before it was killed.
type crashLog struct {
	created  map[string]bool
	acked    map[string]int // highest acknowledged event index per session
	replaced map[string]map[int]bool
}

func parseCrashLog(t *testing.T, lines []string) crashLog {
	l := crashLog{created: map[string]bool{}, acked: map[string]int{}, replaced: map[string]map[int]bool{}}
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "created":
			l.created[f[1]] = true
		case len(f) == 3 && (f[0] == "ack" || f[0] == "rep"):
			i, err := strconv.Atoi(f[2])
			if err != nil {
				t.Fatalf("bad child line %q", line)
			}
			if f[0] == "ack" {
				l.acked[f[1]] = max(l.acked[f[1]], i)
			} else {
				if l.replaced[f[1]] == nil {
					l.replaced[f[1]] = map[int]bool{}
				}
				l.replaced[f[1]][i] = true
			}
		case strings.HasPrefix(line, "error "):
			t.Fatalf("child failed: %s", line)
		}
	}
	return l
}

// killMode says when a trial's SIGKILL comes.
type killMode int

const (
	// killAfterStart: while the child starts, opens the file or creates
	// its sessions.
	killAfterStart killMode = iota
	// killAfterReady: around the first appends.
	killAfterReady
	// killAfterAck: in the middle of a run of appends and replacements.
	killAfterAck
)

func (m killMode) String() string {
	return [...]string{"start", "ready", "first ack"}[m]
}

// TestDurabilityUnderSIGKILL kills a process appending to SQLite sessions
// at random moments, crashTrials times, and after each kill opens the
// store: every session must load, every acknowledged event and
// replacement must be there, and every stored event must be whole, in
// order, and stored with its state change. Two lanes, each on its own
// file, run at once to use both cores.
func TestDurabilityUnderSIGKILL(t *testing.T) {
	if os.Getenv(crashDBEnv) != "" {
		t.Skip("in the child process")
	}
	const lanes = 2
	for lane := range lanes {
		t.Run(fmt.Sprintf("lane%d", lane), func(t *testing.T) {
			t.Parallel()
			crashLane(t, lane, crashTrials/lanes)
		})
	}
}

func crashLane(t *testing.T, lane, trials int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, uint64(lane)))
	path := filepath.Join(t.TempDir(), "sessions.db")
	start := time.Now()
	var events, killedMidRun int
	for trial := range trials {
		mode := killAfterAck
		switch rng.IntN(10) {
		case 0:
			mode = killAfterStart
		case 1:
			mode = killAfterReady
		}
		// The delay counts from the moment the mode names; kills after
		// the first acknowledgement are timed from it rather than from
		// the start, so that they land among appends however slowly a
		// loaded machine starts the child.
		delay := time.Duration(rng.IntN(30_000)) * time.Microsecond
		lines := runCrashChild(t, path, trial, mode, delay)
		acks := parseCrashLog(t, lines)
		if len(acks.acked) > 0 {
			killedMidRun++
		}
		events += verifyCrashStore(t, path, trial, acks)
		if t.Failed() {
			t.Fatalf("trial %d (kill %v after %v) failed; seed %d", trial, delay, mode, seed)
		}
	}
	t.Logf("%d trials in %v; %d killed while appending; %d events verified", trials, time.Since(start).Round(time.Millisecond), killedMidRun, events)
	// Four in five trials kill after an acknowledgement; half is a bound
	// that chance never reaches.
	if killedMidRun < trials/2 {
		t.Errorf("only %d of %d kills landed while the child was appending", killedMidRun, trials)
	}
}

// runCrashChild starts the child, kills it with SIGKILL delay after the
// moment mode names, and returns its output lines.
func runCrashChild(t *testing.T, path string, trial int, mode killMode, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashTrialEnv+"="+strconv.Itoa(trial))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready, acked := make(chan struct{}), make(chan struct{})
	done := make(chan []string)
	go func() {
		var lines []string
		sawAck := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			lines = append(lines, line)
			if line == "ready" {
				close(ready)
			}
			if strings.HasPrefix(line, "ack ") && !sawAck {
				sawAck = true
				close(acked)
			}
		}
		done <- lines
	}()
	var wait <-chan struct{}
	switch mode {
	case killAfterReady:
		wait = ready
	case killAfterAck:
		wait = acked
	}
	if wait != nil {
		select {
		case <-wait:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("trial %d: child not at %v after 30s; stderr:\n%s", trial, mode, stderr.String())
		}
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("trial %d: kill: %v", trial, err)
	}
	lines := <-done
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("trial %d: child ended on its own (%v) before the kill; output %q; stderr:\n%s", trial, err, lines, stderr.String())
	}
	return lines
}

// verifyCrashStore opens the store after trial's kill and checks it; it
// returns the number of events checked.
func verifyCrashStore(t *testing.T, path string, trial int, acks crashLog) int {
	t.Helper()
	ctx := context.Background()
	s, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatalf("trial %d: open after kill: %v", trial, err)
	}
	defer s.Close()
	list, err := s.List(ctx, &session.ListRequest{AppName: crashApp})
	if err != nil {
		t.Fatalf("trial %d: list: %v", trial, err)
	}
	stored := map[string]bool{}
	checked := 0
	for _, l := range list.Sessions {
		stored[l.ID()] = true
		var n int
		if _, err := fmt.Sscanf(l.ID(), "t%03d-", &n); err != nil || n != trial {
			continue // an earlier trial's, checked then
		}
		resp, err := s.Get(ctx, &session.GetRequest{AppName: crashApp, UserID: "u", SessionID: l.ID()})
		if err != nil {
			t.Errorf("trial %d: session %s does not load: %v", trial, l.ID(), err)
			continue
		}
		checked += verifyCrashSession(t, resp.Session, acks)
	}
	for sid := range acks.created {
		if !stored[sid] {
			t.Errorf("trial %d: acknowledged session %s is missing", trial, sid)
		}
	}
	// Every session of every trial still loads.
	if trial%25 == 24 {
		for _, l := range list.Sessions {
			if _, err := s.Get(ctx, &session.GetRequest{AppName: crashApp, UserID: "u", SessionID: l.ID()}); err != nil {
				t.Errorf("trial %d: session %s does not load: %v", trial, l.ID(), err)
			}
		}
	}
	return checked
}

func verifyCrashSession(t *testing.T, sess session.Session, acks crashLog) int {
	t.Helper()
	sid := sess.ID()
	n := sess.Events().Len()
	acked, ok := acks.acked[sid]
	switch {
	case ok && n < acked+1:
		t.Errorf("%s: %d events stored, but event %d was acknowledged", sid, n, acked)
	case ok && n > acked+2, !ok && n > 1:
		// One append may have committed without being acknowledged.
		t.Errorf("%s: %d events stored, more than acknowledged (%d, %v) plus one", sid, n, acked, ok)
	}
	for i := range n {
		ev := sess.Events().At(i)
		if ev.ID != crashEventID(sid, i) {
			t.Errorf("%s: event %d is %q, want %q", sid, i, ev.ID, crashEventID(sid, i))
			continue
		}
		text := ""
		if ev.Content != nil && len(ev.Content.Parts) == 1 {
			text = ev.Content.Parts[0].Text
		}
		switch {
		case text == crashMasked(sid, i):
		case text == crashPayload(sid, i) && !acks.replaced[sid][i]:
		default:
			t.Errorf("%s: event %d has content of %d bytes, want the original or (if acknowledged: %v) the masked text", sid, i, len(text), acks.replaced[sid][i])
		}
		if ev.Partial || !maps.Equal(ev.Actions.StateDelta, crashStored(sid, i)) {
			t.Errorf("%s: event %d: partial %v, state delta %v, want %v", sid, i, ev.Partial, ev.Actions.StateDelta, crashStored(sid, i))
		}
	}
	// The state change was committed with its event: the state is the
	// last even event's.
	last := float64((n - 1) &^ 1)
	v, err := sess.State().Get("n")
	if n > 0 && (err != nil || v != last) {
		t.Errorf("%s: state n = %v (%v) with %d events, want %v: the event and its state change were not one transaction", sid, v, err, n, last)
	}
	if u, _ := sess.State().Get("user:last-" + sid); n > 0 && u != last {
		t.Errorf("%s: user state = %v with %d events, want %v", sid, u, n, last)
	}
	return n
}
