// Command server is a small MCP server used by the mcptools tests. It serves
// over stdio by default; the tests also serve the same tools in-process over
// streamable HTTP through testserver.New.
//
// With -sleep-child it instead sleeps until killed: the "spawn" tool starts
// such a child so tests can check that a server's children die with it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/agentry-dev/agentry/mcptools/testdata/server/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	sleepChild := flag.Bool("sleep-child", false, "sleep until killed")
	prefix := flag.String("prefix", "", "prefix for every tool name")
	mark := flag.String("mark", "", "a file to append this process's pid to when it starts")
	flag.Parse()
	if *mark != "" {
		f, err := os.OpenFile(*mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	if *sleepChild {
		time.Sleep(time.Hour)
		return
	}
	spawn := func() (int, error) {
		// The child inherits no pipes of ours, so only the process group
		// ties it to this server.
		cmd := exec.Command(os.Args[0], "-sleep-child")
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}
	srv := testserver.New(testserver.Options{Prefix: *prefix, Spawn: spawn, Crash: func() { os.Exit(3) }})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
