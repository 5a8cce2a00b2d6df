// Package a2acli is agentry's A2A client for users, the engine of
// `agentry a2a`: it reads an agent's card, reaches the agent over one of
// its bindings (JSON-RPC, REST or gRPC through a2a-go's client, or
// agentry's live session endpoint /ws), sends a prompt or follows a task,
// and streams the task's events as text or A2A JSON lines. When the task
// waits for the user it asks on the terminal — a development-tool
// extension's confirmation as "allow once, always or cancel", a plain
// question as a line of text — or answers as Config.Approve says, and the
// task goes on.
//
// Run is the entry point; ExitCode maps its outcome to the command's exit
// code.
package a2acli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Transports Config.Transport names.
const (
	// TransportAuto picks TransportLive when the card declares
	// capabilities.bidiStreaming and a gRPC interface, else the card's
	// first interface a2a-go's client supports.
	TransportAuto = "auto"
	// TransportJSONRPC is A2A's JSON-RPC binding, streamed over SSE.
	TransportJSONRPC = "jsonrpc"
	// TransportREST is A2A's HTTP+JSON binding.
	TransportREST = "rest"
	// TransportGRPC is A2A's gRPC binding.
	TransportGRPC = "grpc"
	// TransportLive is A2A's bidirectional SendLiveMessage on the gRPC
	// binding: the answer to a question goes back on the task's stream.
	TransportLive = "live"
	// TransportWS is agentry's live session endpoint, GET /ws.
	TransportWS = "ws"
)

// Transports lists the transports Config.Transport accepts, in the order
// the help names them.
func Transports() []string {
	return []string{TransportAuto, TransportJSONRPC, TransportREST, TransportGRPC, TransportLive, TransportWS}
}

// Approval modes Config.Approve names.
const (
	// ApproveAsk asks the user about every confirmation.
	ApproveAsk = "ask"
	// ApproveYes allows every call once, without asking.
	ApproveYes = "yes"
	// ApproveNo declines every call, without asking.
	ApproveNo = "no"
)

// Output formats Config.Output names.
const (
	// OutputText writes the answer to Out and the progress to Err.
	OutputText = "text"
	// OutputJSON writes every event to Out as an A2A 1.0 JSON line.
	OutputJSON = "json"
)

// WSBinding is the protocol binding agentry's cards give the /ws
// endpoint.
const WSBinding = "WEBSOCKET"

// Exit codes of ExitCode.
const (
	// ExitCompleted: the task completed (or the agent answered with a
	// message).
	ExitCompleted = 0
	// ExitFailed: the task failed, was canceled or rejected, or the agent
	// could not be reached.
	ExitFailed = 1
	// ExitUsage: the command line is wrong.
	ExitUsage = 2
	// ExitWaiting: the task waits for input or authentication that
	// nothing here could give.
	ExitWaiting = 3
	// ExitInterrupted: Ctrl-C or SIGTERM; the task was cancelled.
	ExitInterrupted = 130
)

// ErrInterrupted reports a run whose context ended (Ctrl-C, SIGTERM): the
// task was cancelled.
var ErrInterrupted = errors.New("interrupted")

// UsageError reports a command line Run cannot act on; its message says
// what to change.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Config configures Run.
type Config struct {
	// URL is the agent's base URL (http://127.0.0.1:41242) or its card's
	// URL; with TransportWS also the endpoint's ws:// or wss:// URL.
	URL string
	// Transport is one of Transports; "" is TransportAuto.
	Transport string
	// Plain leaves the development-tool extension off: the agent is
	// spoken to as any A2A client would.
	Plain bool
	// Token is the bearer token sent with every call (never with the
	// card's request, which is public, nor in a URL).
	Token string
	// ContextID continues a conversation.
	ContextID string
	// TaskID continues a task: with a Prompt, the prompt answers it;
	// without one, Run follows the task (reattaches).
	TaskID string
	// Prompt is the message's text.
	Prompt string
	// Output is OutputText ("") or OutputJSON.
	Output string
	// Approve is ApproveAsk (""), ApproveYes or ApproveNo.
	Approve string
	// Out receives the answer (text) or the events (JSON).
	Out io.Writer
	// Err receives progress, questions, warnings and the summary.
	Err io.Writer
	// Dim dims the progress on Err (a terminal without NO_COLOR).
	Dim bool
	// Answers opens the reader answers are read from, one line each; nil,
	// or an error, means nothing can answer: confirmations are then
	// declined and a question ends the run waiting.
	Answers func() (io.Reader, error)
	// HTTPClient makes the card request and the HTTP bindings' calls; nil
	// is a client without an overall timeout (a task streams as long as it
	// runs).
	HTTPClient *http.Client
	// Logger receives debug logs; nil is slog.Default().
	Logger *slog.Logger
	// WatchEvery is how often a task waiting for the user's answer is
	// read while the question is asked, to withdraw the question when the
	// answer came from elsewhere (a shared session's terminal, IDE or
	// another client); 0 is every second.
	WatchEvery time.Duration

	// after makes the watch's timers; nil is time.After (tests).
	after func(time.Duration) <-chan time.Time
}

// Outcome is where a run left the task.
type Outcome struct {
	// State is the task's last state; TaskStateCompleted for an answer
	// without a task; "" when no event arrived.
	State a2a.TaskState
	// TaskID and ContextID are the task's and its conversation's, once
	// the agent named them.
	TaskID    a2a.TaskID
	ContextID string
}

// ExitCode is the exit code of a run that ended with o and err: the one
// table of `agentry a2a`'s codes.
func ExitCode(o Outcome, err error) int {
	var usage *UsageError
	switch {
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &usage):
		return ExitUsage
	case err != nil:
		return ExitFailed
	}
	switch o.State {
	case a2a.TaskStateCompleted:
		return ExitCompleted
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return ExitWaiting
	}
	return ExitFailed
}

// check validates cfg and fills its defaults.
func (cfg *Config) check() error {
	if cfg.Transport == "" {
		cfg.Transport = TransportAuto
	}
	if cfg.Output == "" {
		cfg.Output = OutputText
	}
	if cfg.Approve == "" {
		cfg.Approve = ApproveAsk
	}
	if !slices.Contains(Transports(), cfg.Transport) {
		return &UsageError{fmt.Sprintf("unknown transport %q: use one of %s", cfg.Transport, strings.Join(Transports(), ", "))}
	}
	if cfg.Output != OutputText && cfg.Output != OutputJSON {
		return &UsageError{fmt.Sprintf("unknown output format %q: use text or json", cfg.Output)}
	}
	if !slices.Contains([]string{ApproveAsk, ApproveYes, ApproveNo}, cfg.Approve) {
		return &UsageError{fmt.Sprintf("unknown --approve %q: use ask, yes or no", cfg.Approve)}
	}
	if strings.TrimSpace(cfg.Prompt) == "" && cfg.TaskID == "" {
		return &UsageError{"no prompt: give it as arguments after the URL or on stdin, or follow a task with --task ID"}
	}
	if cfg.Plain && cfg.Transport == TransportWS {
		return &UsageError{"--plain does not go with --transport ws: /ws always speaks the development-tool extension; use jsonrpc, rest or grpc for plain A2A"}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Err == nil {
		cfg.Err = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return nil
}
