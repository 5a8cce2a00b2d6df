// Package proctest helps tests check on processes agentry starts.
package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Running reports whether pid is a live process. A zombie counts as gone:
// it has exited, and on machines whose init does not reap orphans it would
// otherwise linger as "alive" forever.
func Running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// Eventually polls cond until it holds, failing t after 20 seconds. The
// limit is a hang guard, not a speed requirement.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// HelperEnv makes a test binary act as a helper process instead of running
// its tests: its value names what the helper does. The package's TestMain
// checks it (see Helper).
const HelperEnv = "AGENTRY_TEST_HELPER"

// HelperDirEnv is the directory a helper process works in.
const HelperDirEnv = "AGENTRY_TEST_HELPER_DIR"

// Helper returns the helper mode and directory a test binary was started
// with by StartHelper, and whether it was.
func Helper() (mode, dir string, ok bool) {
	mode = os.Getenv(HelperEnv)
	return mode, os.Getenv(HelperDirEnv), mode != ""
}

// StartHelper runs the test binary again as a helper process doing mode in
// dir, with extra variables added to its environment. The helper is
// SIGKILLed at the end of the test if it is still running.
func StartHelper(t testing.TB, mode, dir string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{HelperEnv + "=" + mode, HelperDirEnv + "=" + dir}, extra...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting helper %s: %v", mode, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // SIGKILLed by the test; its status says nothing
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return cmd
}

// WaitPID waits until path holds a process id, as a helper writes it, and
// returns it.
func WaitPID(t testing.TB, path string) int {
	t.Helper()
	var pid int
	Eventually(t, "a pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		pid = n
		return err == nil && n > 0
	})
	return pid
}

// WaitWatched waits until the process group of pid holds agentry's
// watchdog (package childproc): a test that kills agentry before the
// watchdog has started tests the instant between a child's start and its
// watchdog's, which the parent-death signal alone covers.
func WaitWatched(t testing.TB, pid int) {
	t.Helper()
	pgid := groupOf(pid)
	if pgid <= 0 {
		t.Fatalf("process %d has no process group (gone?)", pid)
	}
	Eventually(t, fmt.Sprintf("a watchdog in process group %d", pgid), func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			p, err := strconv.Atoi(e.Name())
			if err != nil || p == pid || groupOf(p) != pgid {
				continue
			}
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); strings.Contains(string(b), "kill -9 0") {
				return true
			}
		}
		return false
	})
}

// groupOf returns pid's process group, or -1.
func groupOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp …
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}

// RequireDieWith SIGKILLs the helper process once the processes it started
// have written their pids to <dir>/<name>.pid and their process groups are
// watched (see WaitWatched), and fails t unless every one of them dies with
// it. A process that outlives it is reported by name and killed.
func RequireDieWith(t testing.TB, helper *exec.Cmd, dir string, names ...string) {
	t.Helper()
	var pids []int
	t.Cleanup(func() {
		for i, pid := range pids {
			if Running(pid) {
				t.Errorf("%s (pid %d) outlived its agentry", names[i], pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for _, name := range names {
		pid := WaitPID(t, filepath.Join(dir, name+".pid"))
		if !Running(pid) {
			t.Fatalf("%s (pid %d) is not running before the kill", name, pid)
		}
		pids = append(pids, pid)
	}
	for _, pid := range pids {
		WaitWatched(t, pid)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	Eventually(t, "the processes to die with their agentry", func() bool {
		for _, pid := range pids {
			if Running(pid) {
				return false
			}
		}
		return true
	})
}
