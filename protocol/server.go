// Package protocol serves agentry sessions over A2A (a2a-go v2): JSON-RPC
// with SSE (A2A 1.0 and, for clients of the gemini-cli generation, 0.3),
// REST and gRPC, on one port, with gemini-cli's development-tool extension
// (package devtool) for clients that activate it, plain A2A for the
// others. An A2A context is a runtime session (the contextId is the
// session id); each task is one prompt's run on it. The server turns the
// session's protocol events into status updates (and, for plain clients,
// the answer into an artifact); a tool call that needs the user parks the
// run and ends the execution input-required until the client's
// ToolCallConfirmation, or plain reply, arrives.
//
// The package knows the runtime only through its protocol events, the
// Approver interface and the slash commands' Target (package commands,
// whose registry runs commands/get and command/execute); HTTP security (token, Host, Origin, body size) is
// package guard's, wrapped around Handler by the caller.
package protocol

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/agentry-dev/agentry/commands"
	"github.com/agentry-dev/agentry/protocol/webhook"
	"github.com/agentry-dev/agentry/runtime"
)

// Disconnect says what happens to a run whose streaming client goes away.
type Disconnect string

// Disconnect policies.
const (
	// DisconnectAuto aborts the run unless the task has a push
	// notification config: a client that registered a webhook expects to
	// be called back, one that did not is not listening any more.
	DisconnectAuto Disconnect = "auto"
	// DisconnectAbort aborts the run, as gemini-cli does ("Execution
	// aborted by client.").
	DisconnectAbort Disconnect = "abort"
	// DisconnectContinue lets the run finish; its task can be read or
	// resubscribed to.
	DisconnectContinue Disconnect = "continue"
)

// PlainApprovals says how a tool call that needs approval is decided in
// a task whose client did not activate the development-tool extension.
type PlainApprovals string

// Plain approval modes.
const (
	// PlainApprovalsAsk parks the task input-required with a plain-text
	// question; the client's reply (yes, always or no) decides.
	PlainApprovalsAsk PlainApprovals = "ask"
	// PlainApprovalsPolicy asks nobody: what the session's approval
	// policy does not allow is denied, as in a batch run.
	PlainApprovalsPolicy PlainApprovals = "policy"
)

// SessionRequest asks for the runtime session of a new context.
type SessionRequest struct {
	// ContextID is the A2A context id; the session must use it as its id.
	ContextID string
	// Workspace is the absolute, resolved workspace directory, already
	// checked against the allowed roots. Whether it is trusted is the
	// session factory's decision alone.
	Workspace string
	// Approver answers the session's confirmations through the client.
	Approver runtime.Approver
}

// Memory shows and extends the user's memory (the context files) for
// the memory commands.
type Memory = commands.Memory

// Session is what the server needs of a context's session: the agent
// protocol, plus the session's own feed and what the slash commands read
// and change (commands.Target). *runtime.Session implements it.
type Session interface {
	runtime.AgentProtocol
	// Subscribe follows every stream of the session as one feed, in
	// emission order, from the emitting goroutine. The server needs it,
	// not AgentProtocol.Stream: a context's tasks share one session, a
	// stream may end before its task attaches (its events wait as
	// orphans), and a confirmation request must reach its client while
	// the run is parked on it.
	Subscribe(fn func(runtime.Event)) (unsubscribe func())
	// Target is what the slash commands act on; its ID is the context's
	// contextId. The server answers Workspace and Busy for the context.
	commands.Target
}

var _ Session = (*runtime.Session)(nil)

// Config configures a Server.
type Config struct {
	// NewSession builds a context's session. Required.
	NewSession func(ctx context.Context, r SessionRequest) (Session, error)
	// Workspace is the workspace of a context whose first message names
	// none. Required.
	Workspace string
	// AllowedRoots are the directories a client's workspace_path must lie
	// in; default Workspace alone.
	AllowedRoots []string
	// Model is the configured model, reported until a session names the
	// one it uses.
	Model string
	// Name, Description and Version describe the agent on its card.
	Name, Description, Version string
	// BaseURL is the server's URL (http://127.0.0.1:41242), for the
	// card's interfaces.
	BaseURL string
	// TaskStore stores tasks; default a2a-go's in-memory store.
	TaskStore taskstore.Store
	// PushStore stores push notification configs and PushSender delivers
	// them; default a2a-go's in-memory store and a webhook.Sender.
	PushStore  push.ConfigStore
	PushSender push.Sender
	// AllowPrivatePush accepts push notification configs whose webhook is
	// on this machine, a private network or another special-purpose
	// address (webhook.Special), refused by default when the config is
	// created; the default sender then delivers to them too.
	AllowPrivatePush bool
	// MaxTasks bounds the tasks running at once (parked tasks do not
	// count); default 16.
	MaxTasks int
	// OnDisconnect is the policy for a run whose client disconnects;
	// default DisconnectAuto.
	OnDisconnect Disconnect
	// RequireExtension refuses messages from clients that do not
	// activate the development-tool extension, and marks it required on
	// the card. Reads are served either way. By default a client without
	// it gets plain A2A: status messages with text, the answer as an
	// artifact, and approvals as plain-text questions.
	RequireExtension bool
	// PlainApprovals decides approvals in tasks without the extension;
	// default PlainApprovalsAsk.
	PlainApprovals PlainApprovals
	// Memory serves the memory commands; nil leaves them out.
	Memory Memory
	// Beside, if set, gives each context's session an approver asked
	// beside its clients for every confirmation, as an adopted session's
	// terminal is (WithLocalApprover): the first answer wins, the other
	// requests are withdrawn, and a later answer is refused as already
	// given by Beside's Name. agentry serve puts the IDE's diff view here
	// (ide/idediff.Beside). Called once per context, after NewSession; a
	// nil approver asks the clients alone.
	Beside func(workspace string, sess Session) runtime.EditingApprover
	// BesideName names Beside's answers in errors and logs; default
	// "the IDE".
	BesideName string
	// WSRelay, on a server that is one replica of several, names the
	// replica holding a context when another one holds it: its base URL,
	// and a header for the handshake (the forwarding mark). A /ws
	// connection opened without contextId whose first message is about
	// that context is then relayed there — its frames passed both ways,
	// its close too — rather than refused. r is the connection's
	// handshake. nil relays nothing.
	WSRelay func(r *http.Request, contextID string) (target string, header http.Header, ok bool)
	// IdleTimeout closes a context's session when no task has run on it
	// for this long; its next message reopens it from the session store.
	// 0 keeps sessions open (right for an in-memory store, where closing
	// would lose the conversation).
	IdleTimeout time.Duration
	// Logger receives diagnostics; default slog.Default(). Tokens and
	// message contents are never logged.
	Logger *slog.Logger
	// Now is the clock of status timestamps and of WebSocket idleness;
	// default time.Now.
	Now func() time.Time
	// WS sets the limits of the live session endpoint, GET /ws.
	WS WSConfig
	// Live sets the policy of gRPC SendLiveMessage streams (docs/live.md).
	Live LiveConfig
	// MaxMessageBytes bounds a gRPC message the server receives; set it
	// to the body limit of the HTTP guard in front (a2a.maxBodyBytes).
	// Default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// EventLog, when set, receives every event of every task the server
	// runs, and serves the subscribers of tasks not running here (a
	// cluster replica's shared log: another replica runs the task, or
	// ran it and died). nil keeps a task's events in memory alone.
	EventLog EventLog
}

// EventLog keeps the events of tasks where subscribers of other
// processes find them.
type EventLog interface {
	// Append logs an event of a task this server runs, in the order of
	// the calls for each task. It is called on the turn's goroutine, with
	// the task locked: it must not wait for I/O.
	Append(contextID string, task a2a.TaskID, ev a2a.Event)
	// Follow replays a task's logged events from its first, in order,
	// then follows the events logged later until the task's execution
	// ends. ok is false, with no error, when the log holds no event of
	// the task.
	Follow(ctx context.Context, task a2a.TaskID) (events iter.Seq2[a2a.Event, error], ok bool, err error)
}

// DefaultMaxTasks is Config.MaxTasks's default.
const DefaultMaxTasks = 16

// DefaultGCPercent is the garbage collector's target (GOGC) for a process
// serving A2A, which agentry serve sets unless told otherwise: with Go's
// 100, collections of a heap holding 200 streams' deltas came often
// enough to put the p99 added latency per event over 5 ms on two cores;
// at 200 it stays under, for at most three times the live heap.
const DefaultGCPercent = 200

// Server serves agentry sessions over A2A. Create it with New and serve
// Handler; Close ends every session.
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	roots   []string
	handler a2asrv.RequestHandler
	card    *a2a.AgentCard
	// wireCheck, set by tests, sees every stream response the SSE writer
	// encodes itself (legacy: in A2A 0.3), to compare it with
	// encoding/json's.
	wireCheck func(got []byte, ev a2a.Event, legacy bool)
	slots     *slots
	// cmds are the slash commands of commands/get and command/execute.
	cmds *commands.Registry
	// ctx is the runs' context: they belong to the server, not to the
	// request that started them.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	contexts map[string]*convo
	// idleClosed remembers the workspace of each context closed for
	// idleness, so that its next message or command reopens it there.
	idleClosed map[string]string
	live       map[a2a.TaskID]*liveTask
	closed     bool

	wsCfg          WSConfig
	originPatterns []string
	// wsTrace, set by benchmarks, sees every frame a /ws connection reads
	// (read) or writes, as it is read or about to be written.
	wsTrace func(read bool, conn any, frame []byte)
	// decided remembers the answered calls of recently finished tasks
	// ("proceed_once by the terminal"), so that a late answer learns who
	// decided; decidedOrder bounds it.
	decided      map[a2a.TaskID]map[string]string
	decidedOrder []a2a.TaskID

	liveCfg LiveConfig
	// draining is closed by Drain.
	draining  chan struct{}
	drainOnce sync.Once
	// grpcTrace, set by benchmarks, sees the messages of every gRPC
	// stream (see traceStreams).
	grpcTrace atomic.Pointer[grpcTrace]
}

// maxDecided bounds the finished tasks whose answers are remembered.
const maxDecided = 1024

// rememberAnswers keeps a finished task's decided calls.
func (s *Server) rememberAnswers(t *liveTask) {
	t.mu.Lock()
	var calls map[string]string
	for call, opt := range t.answered {
		if calls == nil {
			calls = map[string]string{}
		}
		calls[call] = opt + t.by(call)
	}
	t.mu.Unlock()
	if calls == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.decided == nil {
		s.decided = map[a2a.TaskID]map[string]string{}
	}
	if _, ok := s.decided[t.id]; !ok {
		s.decidedOrder = append(s.decidedOrder, t.id)
	}
	s.decided[t.id] = calls
	if len(s.decidedOrder) > maxDecided {
		delete(s.decided, s.decidedOrder[0])
		s.decidedOrder = s.decidedOrder[1:]
	}
}

// answerOf says how a finished task's call was decided, if remembered.
func (s *Server) answerOf(task a2a.TaskID, call string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decided[task][call]
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.NewSession == nil {
		return nil, errors.New("protocol: Config.NewSession is required")
	}
	ws, err := resolveDir(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("protocol: workspace: %w", err)
	}
	cfg.Workspace = ws
	if cfg.MaxTasks <= 0 {
		cfg.MaxTasks = DefaultMaxTasks
	}
	if cfg.OnDisconnect == "" {
		cfg.OnDisconnect = DisconnectAuto
	}
	switch cfg.OnDisconnect {
	case DisconnectAuto, DisconnectAbort, DisconnectContinue:
	default:
		return nil, fmt.Errorf("protocol: OnDisconnect %q: want auto, abort or continue", cfg.OnDisconnect)
	}
	switch cfg.PlainApprovals {
	case "":
		cfg.PlainApprovals = PlainApprovalsAsk
	case PlainApprovalsAsk, PlainApprovalsPolicy:
	default:
		return nil, fmt.Errorf("protocol: PlainApprovals %q: want ask or policy", cfg.PlainApprovals)
	}
	if cfg.Name == "" {
		cfg.Name = "agentry"
	}
	if cfg.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("protocol: MaxMessageBytes %d: want a positive size (0 for %d)", cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	live, err := cfg.Live.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, now: cfg.Now, liveCfg: live, draining: make(chan struct{}),
		slots:    &slots{max: cfg.MaxTasks},
		contexts: map[string]*convo{}, idleClosed: map[string]string{}, live: map[a2a.TaskID]*liveTask{},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cmds, err = commands.New(commands.Config{Memory: cfg.Memory, Workspace: ws, ReloadAll: s.reloadMemory}); err != nil {
		return nil, fmt.Errorf("protocol: %w", err)
	}
	roots := cfg.AllowedRoots
	if len(roots) == 0 {
		roots = []string{ws}
	}
	for _, r := range roots {
		abs, err := resolveDir(r)
		if err != nil {
			return nil, fmt.Errorf("protocol: allowed root: %w", err)
		}
		s.roots = append(s.roots, abs)
	}
	if cfg.TaskStore == nil {
		cfg.TaskStore = taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: SingleUser})
	}
	if cfg.PushStore == nil {
		cfg.PushStore = push.NewInMemoryStore()
	}
	if cfg.PushSender == nil {
		cfg.PushSender = webhook.NewSender(webhook.Config{AllowPrivate: cfg.AllowPrivatePush, Logger: s.log})
	}
	s.cfg = cfg
	s.wsCfg = cfg.WS.withDefaults()
	s.originPatterns = cfg.WS.AllowedOrigins
	s.card = s.agentCard()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	base := a2asrv.NewHandler(refuse{},
		a2asrv.WithTaskStore(cfg.TaskStore),
		a2asrv.WithPushNotifications(cfg.PushStore, cfg.PushSender),
		a2asrv.WithLogger(s.log),
	)
	s.handler = &a2asrv.InterceptedHandler{
		Handler:      handler{RequestHandler: base, s: s},
		Interceptors: []a2asrv.CallInterceptor{interceptor{s}},
		Logger:       s.log,
	}
	if cfg.IdleTimeout > 0 {
		go s.evictIdle(cfg.IdleTimeout)
	}
	return s, nil
}

// RequestHandler returns the transport-independent A2A handler, for
// transports the caller adds.
func (s *Server) RequestHandler() a2asrv.RequestHandler { return s.handler }

// Card returns the agent card.
func (s *Server) Card() *a2a.AgentCard { return s.card }

// Close ends every context's session. Parked runs are aborted.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	cs := make([]*convo, 0, len(s.contexts))
	for _, c := range s.contexts {
		cs = append(cs, c)
	}
	s.contexts = map[string]*convo{}
	s.mu.Unlock()
	s.closeHubs(cs)
	s.cancel()
	var errs []error
	for _, c := range cs {
		c.unsub()
		if !c.adopted {
			errs = append(errs, c.sess.Close())
		}
	}
	return errors.Join(errs...)
}

// convo returns the context's conversation, starting its session on first
// use. workspace is the client's workspace_path ("" for the default).
func (s *Server) convo(ctx context.Context, id, workspace string) (*convo, error) {
	dir, err := s.workspaceFor(workspace)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	if c := s.contexts[id]; c != nil {
		s.mu.Unlock()
		if workspace != "" && c.workspace != dir {
			return nil, fmt.Errorf("context %s works in %s; a context cannot change its workspace (start a new context for %s)", id, c.workspace, dir)
		}
		return c, nil
	}
	if was, ok := s.idleClosed[id]; ok {
		// Closed for idleness: it reopens where it worked.
		if workspace != "" && was != dir {
			s.mu.Unlock()
			return nil, fmt.Errorf("context %s works in %s; a context cannot change its workspace (start a new context for %s)", id, was, dir)
		}
		dir = was
	}
	s.mu.Unlock()

	c := &convo{s: s, id: id, workspace: dir, tasks: map[string]*liveTask{}, orphans: map[string][]item{}}
	sess, err := s.cfg.NewSession(ctx, SessionRequest{ContextID: id, Workspace: dir, Approver: approver{c}})
	if err != nil {
		return nil, fmt.Errorf("cannot start a session in %s: %w", dir, err)
	}
	c.sess = sess
	if s.cfg.Beside != nil {
		c.local = s.cfg.Beside(dir, sess)
		c.localName = cmp.Or(s.cfg.BesideName, "the IDE")
	}
	c.unsub = sess.Subscribe(func(ev runtime.Event) { c.route(ev.StreamID, item{ev: ev}) })

	s.mu.Lock()
	defer s.mu.Unlock()
	if other := s.contexts[id]; other != nil || s.closed {
		// Another request started it first (or the server closed).
		c.unsub()
		_ = sess.Close()
		if other == nil {
			return nil, errors.New("the server is shutting down")
		}
		return other, nil
	}
	s.contexts[id] = c
	delete(s.idleClosed, id)
	return c, nil
}

// evictIdle closes the sessions of contexts idle longer than timeout, so
// a long-running server's memory follows its active conversations, not
// every conversation it ever had.
func (s *Server) evictIdle(timeout time.Duration) {
	tick := time.NewTicker(max(timeout/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-tick.C:
			var idle []*convo
			s.mu.Lock()
			for _, c := range s.contexts {
				if c.evictIfIdle(now, timeout) {
					idle = append(idle, c)
					s.idleClosed[c.id] = c.workspace
				}
			}
			s.mu.Unlock()
			for _, c := range idle {
				s.forget(c)
				c.unsub()
				if err := c.sess.Close(); err != nil {
					s.log.Warn("a2a: closing an idle session", "context", c.id, "err", err)
				}
			}
		}
	}
}

// Evict closes a context's session now, whatever runs on it: its running
// and parked turns are aborted, and its next message reopens it from the
// session store. A cluster replica evicts the contexts it lost, which
// another replica may now run. It reports whether the context was open;
// an adopted session is never evicted.
func (s *Server) Evict(contextID string) bool {
	s.mu.Lock()
	c := s.contexts[contextID]
	if c == nil || c.adopted {
		s.mu.Unlock()
		return false
	}
	delete(s.contexts, contextID)
	s.idleClosed[contextID] = c.workspace
	all := make([]*liveTask, 0, len(s.live))
	for _, t := range s.live {
		all = append(all, t)
	}
	s.mu.Unlock()
	var tasks []*liveTask
	for _, t := range all {
		t.mu.Lock()
		if t.task.ContextID == contextID {
			tasks = append(tasks, t)
		}
		t.mu.Unlock()
	}
	// Each run is stopped as CancelTask stops it (a parked call is
	// declined), and given a bounded time to end before its session
	// closes under it.
	wait, stop := context.WithTimeout(s.ctx, evictWait)
	defer stop()
	for _, t := range tasks {
		from, _ := s.stopRun(t, nil)
		s.follow(wait, t, from, func(a2a.Event, error) bool { return true })
	}
	s.closeHubs([]*convo{c})
	c.unsub()
	if err := c.sess.Close(); err != nil {
		s.log.Warn("a2a: closing an evicted session", "context", contextID, "err", err)
	}
	return true
}

// evictWait bounds how long Evict waits for the context's runs to end.
const evictWait = 5 * time.Second

// forget removes an evicted context from the map (if it is still there).
func (s *Server) forget(c *convo) {
	s.mu.Lock()
	if s.contexts[c.id] == c {
		delete(s.contexts, c.id)
	}
	s.mu.Unlock()
}

// workspaceFor resolves a client's workspace_path against the allowed
// roots.
func (s *Server) workspaceFor(p string) (string, error) {
	if p == "" {
		return s.cfg.Workspace, nil
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("workspace_path %q must be an absolute path", p)
	}
	dir, err := resolveDir(p)
	if err != nil {
		return "", fmt.Errorf("workspace_path: %w", err)
	}
	for _, r := range s.roots {
		if within(dir, r) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("workspace_path %s is outside the directories this server allows (%v); the server's --allowed-root flag adds one", dir, s.roots)
}

func resolveDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", abs)
		}
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", real)
	}
	return real, nil
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != ".."+string(filepath.Separator))
}

func (s *Server) addLive(t *liveTask) {
	s.mu.Lock()
	s.live[t.id] = t
	s.mu.Unlock()
}

func (s *Server) getLive(id a2a.TaskID) *liveTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}

// releaseContext frees the task's context for its next task. It may be
// called more than once.
func (s *Server) releaseContext(t *liveTask) {
	t.mu.Lock()
	c := t.c
	t.mu.Unlock()
	if c != nil {
		c.release(t)
	}
}

// finish forgets a task whose run ended. It may be called more than once.
func (s *Server) finish(t *liveTask) {
	s.rememberAnswers(t)
	s.releaseContext(t)
	s.mu.Lock()
	if s.live[t.id] == t {
		delete(s.live, t.id)
	}
	s.mu.Unlock()
}

// slots counts running executions against MaxTasks.
type slots struct {
	mu       sync.Mutex
	max, cur int
}

// acquire takes a slot; force takes one even over the limit (a
// confirmation resuming a parked run must not be refused).
func (sl *slots) acquire(force bool) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.cur >= sl.max && !force {
		return false
	}
	sl.cur++
	return true
}

func (sl *slots) release() {
	sl.mu.Lock()
	sl.cur--
	sl.mu.Unlock()
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// newID returns a random id for command executions.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// SubmitSend is Submit for a driver that has the session's own message
// (the terminal: what the user typed and its @path expansion): the
// session runs msg as it is, and the task's history shows what the user
// typed. contextID is the adopted session's id.
func (s *Server) SubmitSend(ctx context.Context, contextID string, msg *runtime.SendMessage) (string, error) {
	text := msg.DisplayContent
	if text == "" {
		var b strings.Builder
		for _, p := range msg.Content {
			if p.Type == runtime.PartText {
				b.WriteString(p.Text)
			}
		}
		text = b.String()
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.ContextID = contextID
	_, stream, err := s.Submit(context.WithValue(ctx, driverSendKey{}, msg), m)
	return stream, err
}

type driverSendKey struct{}

// Adopt serves an existing session as the context named by its id, for
// a driver that serves its own session (agentry run --a2a-port). The
// session keeps its own approver; the server does not close it.
func (s *Server) Adopt(sess Session, workspace string, opts ...AdoptOption) error {
	dir, err := resolveDir(workspace)
	if err != nil {
		return fmt.Errorf("protocol: adopt: workspace: %w", err)
	}
	c := &convo{s: s, id: sess.ID(), workspace: dir, sess: sess, tasks: map[string]*liveTask{}, orphans: map[string][]item{}, adopted: true}
	for _, o := range opts {
		o(c)
	}
	// A shared session keeps its events from the start, so that a client
	// joining later can be given the conversation so far.
	c.hub = newHub(s.wsCfg.ReplayEvents)
	c.unsub = sess.Subscribe(func(ev runtime.Event) { c.route(ev.StreamID, item{ev: ev}) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contexts[c.id] != nil {
		c.unsub()
		return fmt.Errorf("protocol: adopt: context %s is already served", c.id)
	}
	s.contexts[c.id] = c
	return nil
}

// Submit starts a task on an adopted session's context with a message
// from the driver itself, past the interceptor's checks (the driver is
// not a client). It returns the task's id and the runtime stream running
// it.
func (s *Server) Submit(ctx context.Context, m *a2a.Message) (a2a.TaskID, string, error) {
	t, _, err := s.send(context.WithValue(ctx, driverKey{}, true), &a2a.SendMessageRequest{Message: m})
	if err != nil {
		return "", "", err
	}
	select {
	case <-t.attached:
	case <-ctx.Done():
		// Given up while queued: the turn must not run later.
		t.mu.Lock()
		if t.c == nil {
			t.cancelled = true
			t.unqueueOnce.Do(func() { close(t.unqueue) })
		}
		t.mu.Unlock()
		return "", "", ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stream == "" {
		return "", "", fmt.Errorf("protocol: the task failed to start: %s", t.task.Status.Message.Parts[0].Text())
	}
	return t.id, t.stream, nil
}
