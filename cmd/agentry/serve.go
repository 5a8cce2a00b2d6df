package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentry-dev/agentry/agents/remote"
	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/ide/idediff"
	"github.com/agentry-dev/agentry/internal/safefs"
	"github.com/agentry-dev/agentry/internal/version"
	"github.com/agentry-dev/agentry/processors"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/guard"
	"github.com/agentry-dev/agentry/protocol/listen"
	"github.com/agentry-dev/agentry/protocol/taskdb"
	"github.com/agentry-dev/agentry/protocol/webhook"
	"github.com/agentry-dev/agentry/runtime"
)

// DefaultServePort is agentry serve's port, gemini-cli's a2a-server's.
const DefaultServePort = 41242

// tokenEnv names the variable holding the server's bearer token. It is
// read from the real environment only, never from a workspace's .env.
const tokenEnv = "AGENTRY_A2A_TOKEN"

type serveFlags struct {
	host           string
	port           int
	model          string
	yolo           bool
	approvalMode   string
	allowedTools   []string
	workspace      string
	trustWorkspace bool
	allowedRoots   []string
	allowedHosts   []string
	allowedOrigins []string
	maxTasks       int
	onDisconnect   string
	privatePush    bool
	ide            bool
}

// serveFlagKeys maps serve's flags to settings keys.
var serveFlagKeys = withPolicyFlags(map[string]string{
	"model":         "model.name",
	"approval-mode": "general.defaultApprovalMode",
	"allowed-tools": "tools.allowed",
	"max-tasks":     "a2a.maxTasks",
	"on-disconnect": "a2a.onDisconnect",
	"ide":           "ide.enabled",
})

func newServeCommand(io stdio, in *interrupts, exit *int) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve agent sessions over A2A to IDEs and other agents",
		Long: `Serve agent sessions over A2A (JSON-RPC with SSE, REST and gRPC on one
port; A2A 1.0, and 0.3 for clients of the gemini-cli generation) to any A2A
client; clients that activate gemini-cli's development-tool extension get its
updates, the others plain A2A (a2a.requireExtension refuses them instead).

The server listens on 127.0.0.1 unless --host says otherwise. Every request
but the agent card needs the bearer token: AGENTRY_A2A_TOKEN, or
security.a2a.token in ~/.agentry/settings.json, or else a random token printed
once to stderr. A client's workspace_path must lie inside --allowed-root
(default the workspace); whether a workspace is trusted is decided here, never
by the client.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			*exit = serveMain(cmd.Context(), cmd, f, io, in)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "the address to listen on; anything but loopback needs a configured token")
	fl.IntVar(&f.port, "port", DefaultServePort, "the port to listen on (0: any free port)")
	addSessionFlags(fl, &f.model, &f.yolo, &f.approvalMode, &f.allowedTools, &f.workspace, &f.trustWorkspace)
	fl.StringSliceVar(&f.allowedRoots, "allowed-root", nil, "a directory clients' workspaces may lie in (repeatable; default the workspace)")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "a Host header value to accept besides the listening address, localhost, 127.0.0.1 and [::1] (repeatable)")
	fl.StringSliceVar(&f.allowedOrigins, "allowed-origin", nil, "a browser origin allowed to call the server, e.g. http://localhost:3000 (repeatable; default none)")
	fl.IntVar(&f.maxTasks, "max-tasks", 0, "tasks running at once (default 16)")
	fl.StringVar(&f.onDisconnect, "on-disconnect", "", "when a streaming client disconnects: auto (abort unless it set a push config), abort or continue")
	fl.BoolVar(&f.privatePush, "allow-private-push", false, "let push notifications go to webhooks on this machine or a private network")
	fl.BoolVar(&f.ide, "ide", false, "connect to the companion of the IDE agentry serve runs in (ide.enabled): the editor's context goes with prompts of the workspace, and its edits are shown as diffs in the editor, racing the clients")
	return cmd
}

// addSessionFlags adds the flags serve shares with run.
func addSessionFlags(fl *pflag.FlagSet, model *string, yolo *bool, mode *string, allowed *[]string, ws *string, trust *bool) {
	fl.StringVarP(model, "model", "m", "", "the model: gemini-2.5-flash, flash, openai:<model>, replay:<file.jsonl> …")
	fl.BoolVarP(yolo, "yolo", "y", false, "approve every tool call (same as --approval-mode yolo)")
	fl.StringVar(mode, "approval-mode", "", "plan, default, auto_edit or yolo (default default)")
	fl.StringSliceVar(allowed, "allowed-tools", nil, allowedToolsUsage)
	addPolicyFlags(fl)
	fl.StringVarP(ws, "workspace", "w", "", "the workspace directory (default the current directory)")
	fl.BoolVar(trust, "trust-workspace", false, "trust the workspace: read its settings and .env")
}

func serveMain(ctx context.Context, cmd *cobra.Command, f *serveFlags, io stdio, in *interrupts) int {
	fail := func(err error) int {
		code, _ := exitFor(err)
		fmt.Fprintf(io.err, "agentry serve: %v\n", err)
		return code
	}
	if err := applyYolo(cmd, f.yolo, f.approvalMode); err != nil {
		return fail(err)
	}
	settings, err := config.Load(config.LoadOptions{
		Workspace: f.workspace, Flags: cmd.Flags(), FlagKeys: serveFlagKeys, TrustWorkspace: f.trustWorkspace,
	})
	if err != nil {
		return fail(err)
	}
	for _, w := range settings.Warnings {
		fmt.Fprintf(io.err, "agentry serve: warning: %s\n", w)
	}
	if err := setGCPercent(settings.A2A.GCPercent); err != nil {
		return fail(err)
	}
	log := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: slog.LevelWarn}))

	token, tokenSource := os.Getenv(tokenEnv), tokenEnv
	if token == "" {
		token, tokenSource = settings.Security.A2A.Token, "security.a2a.token"
	}
	loopback := isLoopback(f.host)
	if token == "" {
		if !loopback {
			return fail(&inputError{fmt.Sprintf(
				"--host %s makes the server reachable from other machines: set its token first (%s, or security.a2a.token in %s)",
				f.host, tokenEnv, filepath.Join(settings.Home, "settings.json"))})
		}
		if token, err = guard.NewToken(); err != nil {
			return fail(err)
		}
		tokenSource = ""
	} else if err := guard.CheckStrength(token); err != nil {
		advice := fmt.Sprintf("use at least %d random characters, e.g. export %s=$(openssl rand -hex 32)", guard.MinTokenLength, tokenEnv)
		if !loopback {
			return fail(&inputError{fmt.Sprintf("--host %s makes the server reachable from other machines, and %v (from %s): %s",
				f.host, err, tokenSource, advice)})
		}
		fmt.Fprintf(io.err, "agentry serve: warning: %v (from %s): other users of this machine could guess it; %s\n", err, tokenSource, advice)
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return fail(&inputError{fmt.Sprintf("cannot listen on %s:%d: %v", f.host, f.port, err)})
	}
	port := ln.Addr().(*net.TCPAddr).Port
	urlHost := f.host
	if strings.Contains(urlHost, ":") {
		urlHost = "[" + urlHost + "]"
	}
	if f.host == "0.0.0.0" || f.host == "::" {
		urlHost = "127.0.0.1"
	}
	base := fmt.Sprintf("http://%s:%d", urlHost, port)

	origins := append(append([]string{}, settings.Security.A2A.AllowedOrigins...), f.allowedOrigins...)
	ws, err := wsConfig(settings, origins)
	if err != nil {
		_ = ln.Close()
		return fail(err)
	}
	srv, rep, cleanup, err := newA2AServer(ctx, settings, cmd.Flags(), base, f.allowedRoots, f.privatePush || settings.Security.A2A.AllowPrivatePush, ws, log)
	if err != nil {
		_ = ln.Close()
		return fail(err)
	}
	defer cleanup()

	hosts := guard.HostsFor(f.host, port)
	hosts = append(hosts, settings.Security.A2A.AllowedHosts...)
	hosts = append(hosts, f.allowedHosts...)
	hosts = append(hosts, rep.advertisedHost()...)
	g, err := guard.New(guard.Config{
		Token: token, AllowedHosts: hosts,
		AllowedOrigins: origins,
		PublicPaths:    []string{"/.well-known/agent-card.json"},
		MaxBodyBytes:   settings.A2A.MaxBodyBytes,
		Logger:         log,
	})
	if err != nil {
		_ = ln.Close()
		return fail(&inputError{err.Error()})
	}
	limits, err := connLimits(settings)
	if err != nil {
		_ = ln.Close()
		return fail(err)
	}
	// The router sits inside the guard: a request is forwarded to the
	// replica serving its context only once its token is checked.
	hs := listen.NewServer(g.Wrap(rep.handler(srv.Handler())), limits)
	// Live streams waiting for answers would hold the shutdown.
	hs.RegisterOnShutdown(srv.Drain)
	capped := listen.Listener(ln, limits, log)
	capped.Track(hs)
	ln = capped

	// From the listening line on, a signal shuts the server down
	// gracefully; before it, a signal exits at once.
	sigs := in.handle()
	// The token line comes first: whoever waits for the listening line
	// (a supervisor, a test) then has the token too.
	if tokenSource == "" {
		fmt.Fprintf(io.err, "agentry serve: bearer token (shown once): %s\n", token)
	} else {
		fmt.Fprintf(io.err, "agentry serve: bearer token from %s\n", tokenSource)
	}
	fmt.Fprintf(io.err, "agentry serve: live sessions (docs/ws.md) at ws://%s/ws\n", strings.TrimPrefix(base, "http://"))
	fmt.Fprintf(io.err, "agentry serve: listening on %s (agent card %s/.well-known/agent-card.json)\n", base, base)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(err)
		}
	case <-sigs:
		fmt.Fprintln(io.err, "agentry serve: shutting down")
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdown)
	return runtime.ExitOK
}

// wsConfig is the live session endpoint's limits from a2a.ws, and the
// browser origins allowed to open it.
func wsConfig(s *config.Settings, origins []string) (protocol.WSConfig, error) {
	ws := s.A2A.WS
	for _, c := range []struct {
		key string
		v   int64
		off bool // -1 allowed
	}{
		{"a2a.ws.maxFrameBytes", ws.MaxFrameBytes, false},
		{"a2a.ws.queueFrames", int64(ws.QueueFrames), false},
		{"a2a.ws.maxClients", int64(ws.MaxClients), false},
		{"a2a.ws.pingSeconds", int64(ws.PingSeconds), true},
		{"a2a.ws.idleMinutes", int64(ws.IdleMinutes), true},
		{"a2a.ws.replayEvents", int64(ws.ReplayEvents), false},
	} {
		if c.v < 0 && !(c.off && c.v == -1) {
			hint := "0 (the default) or a positive number"
			if c.off {
				hint = "0 (the default), -1 (off) or a positive number"
			}
			return protocol.WSConfig{}, &inputError{fmt.Sprintf("%s is %d: use %s", c.key, c.v, hint)}
		}
	}
	cfg := protocol.WSConfig{
		MaxFrameBytes: ws.MaxFrameBytes, QueueFrames: ws.QueueFrames, MaxClients: ws.MaxClients,
		ReplayEvents: ws.ReplayEvents, AllowedOrigins: origins,
	}
	switch {
	case ws.PingSeconds < 0:
		cfg.PingInterval = -1
	case ws.PingSeconds > 0:
		cfg.PingInterval = time.Duration(ws.PingSeconds) * time.Second
	}
	switch {
	case ws.IdleMinutes < 0:
		cfg.IdleTimeout = -1
	case ws.IdleMinutes > 0:
		cfg.IdleTimeout = time.Duration(ws.IdleMinutes) * time.Minute
	}
	return cfg, nil
}

// liveConfig is the policy of SendLiveMessage streams from a2a.live.
func liveConfig(s *config.Settings) (protocol.LiveConfig, error) {
	m := s.A2A.Live.IdleMinutes
	if m < 1 {
		return protocol.LiveConfig{}, &inputError{fmt.Sprintf(
			"a2a.live.idleMinutes is %d: use at least 1 (the default is %d): a task waiting for input on a live stream must not wait for ever", m, config.DefaultLiveIdleMinutes)}
	}
	return protocol.LiveConfig{IdleTimeout: time.Duration(m) * time.Minute}, nil
}

// setGCPercent applies a2a.gcPercent, unless GOGC is set: the operator's
// environment wins over the settings.
func setGCPercent(pct int) error {
	switch {
	case pct < 0 || (pct > 0 && pct < 25):
		return &inputError{fmt.Sprintf("a2a.gcPercent is %d: use 0 (the default, %d) or a percentage of at least 25", pct, protocol.DefaultGCPercent)}
	case os.Getenv("GOGC") != "":
		return nil
	case pct == 0:
		pct = protocol.DefaultGCPercent
	}
	debug.SetGCPercent(pct)
	return nil
}

// connLimits are the connection caps of the settings; the time bounds
// are listen's defaults.
func connLimits(s *config.Settings) (listen.Limits, error) {
	if n := s.A2A.MaxConnections; n < 0 {
		return listen.Limits{}, &inputError{fmt.Sprintf("a2a.maxConnections is %d: use 0 (the default, %d) or a positive number", n, listen.DefaultMaxConns)}
	}
	if n := s.A2A.MaxConnectionsPerAddress; n < 0 {
		return listen.Limits{}, &inputError{fmt.Sprintf("a2a.maxConnectionsPerAddress is %d: use 0 (the default, %d) or a positive number", n, listen.DefaultMaxConnsPerAddr)}
	}
	return listen.Limits{MaxConns: s.A2A.MaxConnections, MaxConnsPerAddr: s.A2A.MaxConnectionsPerAddress}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newA2AServer builds the protocol server over the settings: one session
// store, model resolver and model availability for every context, the
// agents loaded once, each context's settings loaded for its workspace.
func newA2AServer(ctx context.Context, settings *config.Settings, flags *pflag.FlagSet, baseURL string, roots []string, privatePush bool, live protocol.WSConfig, log *slog.Logger) (*protocol.Server, *replica, func(), error) {
	switch settings.A2A.PlainApprovals {
	case "", string(protocol.PlainApprovalsAsk), string(protocol.PlainApprovalsPolicy):
	default:
		return nil, nil, nil, &inputError{fmt.Sprintf("a2a.plainApprovals is %q: use ask (the default: a client without the development-tool extension is asked yes, always or no) or policy (the approval policy decides, as in a batch run)", settings.A2A.PlainApprovals)}
	}
	liveCfg, err := liveConfig(settings)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkCluster(settings); err != nil {
		return nil, nil, nil, err
	}
	store, closeStore, err := compose.OpenStore(ctx, settings, log)
	if err != nil {
		return nil, nil, nil, err
	}
	// A replica fails only the tasks of contexts no live replica holds
	// (cluster.Node.Recover), not every task left running.
	var taskOpts []taskdb.Option
	if settings.Cluster.Enabled {
		taskOpts = append(taskOpts, taskdb.WithoutRecovery())
	}
	tasks, pushStore, err := openTaskStore(ctx, store, taskOpts...)
	if err != nil {
		_ = closeStore()
		return nil, nil, nil, err
	}
	var rep *replica
	if settings.Cluster.Enabled {
		db, ok := tasks.(*taskdb.Store)
		if !ok {
			_ = closeStore()
			return nil, nil, nil, &inputError{"cluster.enabled needs the tasks in the shared PostgreSQL database (session.store postgres)"}
		}
		if rep, err = startReplica(ctx, settings, baseURL, db, store, log); err != nil {
			_ = closeStore()
			return nil, nil, nil, err
		}
	}
	resolver := compose.NewResolver(settings, nil, nil)
	avail, closeAvail, err := newAvailability(ctx, settings, log)
	if err != nil {
		rep.stop()
		_ = closeStore()
		return nil, nil, nil, err
	}
	closeStore = closingToo(closeStore, closeAvail)
	agentDefs, _ := compose.LoadAgents(settings)
	ws := &workspaceSettings{base: settings, flags: flags, cache: map[string]*config.Settings{settings.Workspace: settings}}
	if len(roots) == 0 {
		roots = settings.Security.A2A.AllowedRoots
	}
	// With ide.enabled the IDE companion is connected in the background
	// (and follows a restarted companion by itself); sessions working in
	// the server's workspace, or below it, get the editor's context with
	// every prompt and show edits as diffs in the editor, beside the
	// clients: the first answer, the IDE's or a client's, wins.
	var conn *ideConn
	if settings.IDE.Enabled {
		conn = newIDEConn(settings.Workspace)
		conn.log = log
		go func() {
			if err := conn.Enable(ctx); err != nil {
				log.Warn("ide: not connected; a new session tries again", "err", err)
			}
		}()
	}
	inIDE := func(dir string) bool { return conn != nil && within(dir, settings.Workspace) }
	serverCtx := ctx // a session's own context ends with its request
	idle := 30 * time.Minute
	switch {
	case settings.Session.Store == config.SessionStoreMemory || settings.A2A.IdleMinutes < 0:
		idle = 0 // closing would lose the conversation, or the user said never
	case settings.A2A.IdleMinutes > 0:
		idle = time.Duration(settings.A2A.IdleMinutes) * time.Minute
	}
	policies := newPolicyLoader(func(w string) { log.Warn(w) })
	srv, err := protocol.New(protocol.Config{
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			s, err := ws.get(r.Workspace)
			if err != nil {
				return nil, err
			}
			check, err := rep.session(ctx, r.ContextID)
			if err != nil {
				return nil, err
			}
			opts := compose.Options{
				SessionID: r.ContextID, SessionService: store, Approver: r.Approver,
				Resolver: resolver, Availability: avail, Logger: log, RemoteAgents: remote.Invokers,
				Lease: check, Policies: policies.load(s, r.Approver != nil),
			}
			if s == settings {
				opts.Agents = agentDefs
			}
			if inIDE(r.Workspace) {
				opts.IDEContext = conn
				conn.Retry(serverCtx) // a companion started after the server
			}
			sess, err := compose.FromSettings(ctx, s, opts)
			if err != nil {
				return nil, err
			}
			return rep.released(sess, r.ContextID), nil
		},
		Beside: func(dir string, sess protocol.Session) runtime.EditingApprover {
			if !inIDE(dir) {
				return nil
			}
			return idediff.Beside(conn, idediff.WithMode(sess.ApprovalMode), idediff.WithLogger(log))
		},
		Workspace:        settings.Workspace,
		AllowedRoots:     roots,
		Model:            settings.Model.Name,
		Version:          version.Version(),
		BaseURL:          baseURL,
		TaskStore:        tasks,
		PushStore:        pushStore,
		PushSender:       webhook.NewSender(webhook.Config{Timeout: 10 * time.Second, AllowPrivate: privatePush, Logger: log}),
		AllowPrivatePush: privatePush,
		MaxTasks:         settings.A2A.MaxTasks,
		OnDisconnect:     protocol.Disconnect(settings.A2A.OnDisconnect),
		// A client without the development-tool extension gets plain A2A
		// unless the settings require the extension.
		RequireExtension: settings.A2A.RequireExtension,
		PlainApprovals:   protocol.PlainApprovals(settings.A2A.PlainApprovals),
		Memory:           memory{ws},
		IdleTimeout:      idle,
		Logger:           log,
		WS:               live,
		Live:             liveCfg,
		// gRPC's own limit on a message, the guard's on a body.
		MaxMessageBytes: int(settings.A2A.MaxBodyBytes),
		EventLog:        rep.eventLog(),
		WSRelay:         rep.wsRelay(),
	})
	if err != nil {
		if conn != nil {
			_ = conn.Close()
		}
		rep.stop()
		_ = closeStore()
		return nil, nil, nil, &inputError{err.Error()}
	}
	if rep != nil {
		rep.srv.Store(srv)
	}
	return srv, rep, func() {
		_ = srv.Close()
		// The sessions are closed: the leases go, and the replica
		// leaves the registry.
		rep.stop()
		if conn != nil {
			_ = conn.Close()
		}
		_ = closeStore()
	}, nil
}

// workspaceSettings loads (once) the settings of each workspace clients
// name. Trust comes from the user's settings and environment; the serve
// flag --trust-workspace trusts the server's own workspace only.
type workspaceSettings struct {
	base  *config.Settings
	flags *pflag.FlagSet

	mu    sync.Mutex
	cache map[string]*config.Settings
}

func (w *workspaceSettings) get(dir string) (*config.Settings, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.cache[dir]; s != nil {
		return s, nil
	}
	s, err := config.Load(config.LoadOptions{Workspace: dir, Flags: w.flags, FlagKeys: serveFlagKeys})
	if err != nil {
		return nil, err
	}
	w.cache[dir] = s
	return s, nil
}

// memory serves the memory commands from the context files.
type memory struct{ ws *workspaceSettings }

func (m memory) Show(_ context.Context, workspace string) (string, []string, error) {
	s, err := m.ws.get(workspace)
	if err != nil {
		return "", nil, err
	}
	mem, err := processors.LoadMemory(compose.MemoryConfig(s, []string{s.Workspace}, nil))
	if err != nil {
		return "", nil, err
	}
	text := strings.TrimSpace(mem.Global + "\n\n" + mem.Project)
	return text, mem.Files, nil
}

// memorySection heads the facts /memory add appends, as gemini-cli's
// save_memory heads its own.
const memorySection = "## Added Memories"

// maxMemoryFileBytes bounds the memory file /memory add rewrites: the cap
// on a context file, beyond which it would not be read anyway.
const maxMemoryFileBytes = 1 << 20

func (m memory) Add(_ context.Context, fact string) (string, error) {
	s := m.ws.base
	name := "AGENTRY.md"
	if len(s.Context.FileName) > 0 {
		name = s.Context.FileName[0]
	}
	path := filepath.Join(s.Home, name)
	if err := os.MkdirAll(s.Home, 0o700); err != nil {
		return "", err
	}
	// The file may be a symlink into a dotfile repository: it is updated
	// where it leads, and stays a symlink.
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	}
	old, err := safefs.ReadFile(target, maxMemoryFileBytes)
	if why := safefs.Refusal(err, maxMemoryFileBytes, ""); why != "" {
		return "", fmt.Errorf("memory file %s: %s", path, why)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	text := string(old)
	fact = strings.Join(strings.Fields(fact), " ")
	if !strings.Contains(text, memorySection) {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if text != "" {
			text += "\n"
		}
		text += memorySection + "\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += "- " + fact + "\n"
	// Atomically: a full disk or a crash leaves the old file intact.
	if err := safefs.WriteFileIn(filepath.Dir(target), filepath.Base(target), []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("memory file %s: %w", path, err)
	}
	return path, nil
}

// servedRun is a run's session served over A2A.
type servedRun struct {
	srv  *protocol.Server
	hs   *http.Server
	sess *runtime.Session
	// announcement is what announce prints.
	announcement string
}

// announce prints where the session is served (and a token made for
// it): the caller does once the session holds what a client arriving
// then should find, such as the run's prompt as a task.
func (r *servedRun) announce(out stdio) { fmt.Fprint(out.err, r.announcement) }

// serveRun serves a run's session on 127.0.0.1:port with the serve
// command's security: the token from AGENTRY_A2A_TOKEN or
// security.a2a.token, else a random one printed to stderr. The server
// starts no other session: a client talks to this run's context.
func serveRun(ctx context.Context, settings *config.Settings, sess *runtime.Session, port int, io stdio, label string, opts ...protocol.AdoptOption) (*servedRun, error) {
	token, printed := os.Getenv(tokenEnv), false
	if token == "" {
		token = settings.Security.A2A.Token
	}
	if token == "" {
		var err error
		if token, err = guard.NewToken(); err != nil {
			return nil, err
		}
		printed = true
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, &inputError{fmt.Sprintf("--a2a-port: cannot listen on 127.0.0.1:%d: %v", port, err)}
	}
	port = ln.Addr().(*net.TCPAddr).Port
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	log := slog.New(slog.NewTextHandler(io.err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	id := sess.ID()
	ws, err := wsConfig(settings, settings.Security.A2A.AllowedOrigins)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	live, err := liveConfig(settings)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	srv, err := protocol.New(protocol.Config{
		WS: ws, Live: live, MaxMessageBytes: int(settings.A2A.MaxBodyBytes),
		NewSession: func(context.Context, protocol.SessionRequest) (protocol.Session, error) {
			return nil, fmt.Errorf("this server serves one run's session: send messages to context %s", id)
		},
		Workspace: settings.Workspace, Model: settings.Model.Name, Version: version.Version(),
		BaseURL: base, Logger: log, RequireExtension: settings.A2A.RequireExtension,
		AllowPrivatePush: settings.Security.A2A.AllowPrivatePush,
	})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	if err := srv.Adopt(sess, settings.Workspace, opts...); err != nil {
		_ = ln.Close()
		return nil, err
	}
	g, err := guard.New(guard.Config{
		Token: token, AllowedHosts: append(guard.LoopbackHosts(port), settings.Security.A2A.AllowedHosts...),
		AllowedOrigins: settings.Security.A2A.AllowedOrigins,
		PublicPaths:    []string{"/.well-known/agent-card.json"}, MaxBodyBytes: settings.A2A.MaxBodyBytes, Logger: log,
	})
	if err != nil {
		_ = ln.Close()
		return nil, &inputError{err.Error()}
	}
	limits, err := connLimits(settings)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	hs := listen.NewServer(g.Wrap(srv.Handler()), limits)
	hs.RegisterOnShutdown(srv.Drain)
	capped := listen.Listener(ln, limits, log)
	capped.Track(hs)
	go func() { _ = hs.Serve(capped) }()
	var b strings.Builder
	if printed {
		fmt.Fprintf(&b, "%s: A2A bearer token (shown once): %s\n", label, token)
	}
	fmt.Fprintf(&b, "%s: live session (docs/ws.md) at ws://127.0.0.1:%d/ws\n", label, port)
	fmt.Fprintf(&b, "%s: serving session %s over A2A at %s\n", label, id, base)
	return &servedRun{srv: srv, hs: hs, sess: sess, announcement: b.String()}, nil
}

// submit runs the prompt as a task of the served context and returns
// its stream.
func (r *servedRun) submit(ctx context.Context, prompt ...string) (string, error) {
	parts := make([]*a2a.Part, len(prompt))
	for i, t := range prompt {
		parts[i] = a2a.NewTextPart(t)
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	m.ContextID = r.sess.ID()
	_, stream, err := r.srv.Submit(ctx, m)
	return stream, err
}

// stop closes the server once the run is over; a client following the
// task has had its last event.
func (r *servedRun) stop() {
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.hs.Shutdown(shutdown)
	_ = r.srv.Close()
}
