//go:build unix

package mcptools

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentry-dev/agentry/internal/proctest"
	"github.com/agentry-dev/agentry/tools"
)

// serverBinEnv passes the test server's path to a helper process.
const serverBinEnv = "AGENTRY_TEST_MCP_SERVER_BIN"

// runHelper is the test binary acting as agentry for
// TestServersDieWithAgentry: it starts a stdio server, has it start a
// child, records both PIDs in dir and waits to be killed.
func runHelper(mode, dir string) {
	fail := func(err any) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if mode != "mcp" {
		fail("unknown helper mode " + mode)
	}
	m, err := New(Config{Servers: map[string]ServerConfig{"s": {Command: os.Getenv(serverBinEnv)}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fail(err)
	}
	ts, errs := m.Tools(context.Background())
	if len(errs) > 0 {
		fail(errs)
	}
	for _, tl := range ts {
		if tl.Name() != "spawn" {
			continue
		}
		res, err := tl.Execute(context.Background(), tools.Call{ID: "c"})
		if err != nil {
			fail(err)
		}
		srv := m.servers["s"]
		srv.mu.Lock()
		pid := srv.cmd.Process.Pid
		srv.mu.Unlock()
		for name, v := range map[string]string{"server": strconv.Itoa(pid), "child": res.LLMContent} {
			if err := os.WriteFile(filepath.Join(dir, name+".pid"), []byte(v), 0o644); err != nil {
				fail(err)
			}
		}
		select {}
	}
	fail("no spawn tool")
}

// TestServersDieWithAgentry SIGKILLs a process with a stdio MCP server
// running and checks that the server and the child it started die with it.
func TestServersDieWithAgentry(t *testing.T) {
	dir := t.TempDir()
	helper := proctest.StartHelper(t, "mcp", dir, serverBinEnv+"="+serverBin)
	proctest.RequireDieWith(t, helper, dir, "server", "child")
}
