package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/wsclient"
	"github.com/agentry-dev/agentry/runtime"
)

func TestAttachTarget(t *testing.T) {
	env := func(token string) func(string) string {
		return func(k string) string {
			if k == tokenEnv {
				return token
			}
			return ""
		}
	}
	cases := []struct {
		name   string
		flags  attachFlags
		args   []string
		token  string
		url    string
		opts   wsclient.Options
		errHas string
	}{
		{name: "defaults", flags: attachFlags{name: "attach"}, token: "tok",
			url: "ws://127.0.0.1:41242/ws", opts: wsclient.Options{Token: "tok", Name: "attach", FromStart: true}},
		{name: "URL and flags", flags: attachFlags{name: "laptop", contextID: "ctx-1"}, args: []string{"wss://box.example:9000/ws"}, token: " tok \n",
			url: "wss://box.example:9000/ws", opts: wsclient.Options{Token: "tok", Name: "laptop", ContextID: "ctx-1", FromStart: true}},
		{name: "no token", flags: attachFlags{name: "attach"}, errHas: tokenEnv},
		{name: "not a WebSocket URL", flags: attachFlags{name: "attach"}, args: []string{"ftp://host/ws"}, token: "tok", errHas: "not a ws:// or wss:// URL"},
		{name: "no host", flags: attachFlags{name: "attach"}, args: []string{"127.0.0.1:41242"}, token: "tok", errHas: "not a ws:// or wss:// URL"},
		{name: "token in the URL", flags: attachFlags{name: "attach"}, args: []string{"ws://h/ws?token=x"}, token: "tok", errHas: "set " + tokenEnv},
		{name: "long name", flags: attachFlags{name: strings.Repeat("n", 65)}, token: "tok", errHas: "--name"},
		{name: "control in the name", flags: attachFlags{name: "a\x1b[2Jb"}, token: "tok", errHas: "--name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, opts, err := attachTarget(&c.flags, c.args, env(c.token))
			if c.errHas != "" {
				var ie *inputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want an input error naming %q", err, c.errHas)
				}
				return
			}
			if err != nil || url != c.url || opts != c.opts {
				t.Errorf("%q, %+v, %v", url, opts, err)
			}
		})
	}
}

// runCLI runs the command line as Main does, without a terminal.
func runCLI(t *testing.T, args ...string) (exit int, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	io := stdio{in: strings.NewReader(""), out: &out, err: &errb}
	in := &interrupts{c: make(chan os.Signal, 1)}
	root := newRoot(io, in, &exit)
	root.SetArgs(args)
	if err := root.ExecuteContext(t.Context()); err != nil && exit == 0 {
		writeErrorLine(io.err, err)
		exit = runtime.ExitInput
	}
	return exit, errb.String()
}

func TestAttachCommandLine(t *testing.T) {
	t.Setenv(tokenEnv, "")
	if exit, stderr := runCLI(t, "attach", "--name", "me", "--context", "c1"); exit != runtime.ExitInput || !strings.Contains(stderr, tokenEnv) {
		t.Errorf("without a token: exit %d, %q", exit, stderr)
	}
	if exit, stderr := runCLI(t, "attach", "ws://a/ws", "ws://b/ws"); exit != runtime.ExitInput || !strings.Contains(stderr, "at most 1 arg") {
		t.Errorf("two URLs: exit %d, %q", exit, stderr)
	}
	if exit, stderr := runCLI(t, "attach", "--bogus"); exit != runtime.ExitInput || !strings.Contains(stderr, "unknown flag") {
		t.Errorf("an unknown flag: exit %d, %q", exit, stderr)
	}
	t.Setenv(tokenEnv, "tok")
	if exit, stderr := runCLI(t, "attach"); exit != runtime.ExitInput || !strings.Contains(stderr, "needs a terminal") {
		t.Errorf("without a terminal: exit %d, %q", exit, stderr)
	}
}

func TestAttachDialError(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&wsclient.HandshakeError{StatusCode: 401, Message: "wrong token"}, "is " + tokenEnv + " the server's token?"},
		{&wsclient.HandshakeError{StatusCode: 404, Message: "no context c9"}, "--context"},
		{errors.New("connection refused"), "is agentry serve (or agentry --a2a-port) running there"},
	}
	for _, c := range cases {
		err := dialError("ws://127.0.0.1:41242/ws", c.err)
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "ws://127.0.0.1:41242/ws") || !errors.Is(err, c.err) {
			t.Errorf("%v", err)
		}
	}
}

func TestRemoteCommands(t *testing.T) {
	cs := []devtool.SlashCommand{{Name: "memory", Description: "Memory", SubCommands: []devtool.SlashCommand{
		{Name: "add", Arguments: []devtool.SlashCommandArgument{{Name: "fact", IsRequired: true}}}}},
		{Name: "model", Arguments: []devtool.SlashCommandArgument{{Name: "name"}}}}
	got := remoteCommands(cs)
	if len(got) != 2 || got[0].Sub[0].Args != "FACT" || got[1].Args != "[NAME]" {
		t.Errorf("%+v", got)
	}
	comp := remoteCompletion(cs)
	var names []string
	for _, c := range comp {
		names = append(names, c.Name)
	}
	if s := strings.Join(names, " "); !strings.Contains(s, "help") || !strings.HasSuffix(s, "memory model") {
		t.Errorf("completion lists %s", s)
	}
}
