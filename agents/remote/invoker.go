package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentry-dev/agentry/agents"
	"github.com/agentry-dev/agentry/runtime"
	"github.com/agentry-dev/agentry/subagents"
)

// errTimeout is the cause of a remote stream stopped at the subagent time
// limit.
var errTimeout = errors.New("subagent time limit reached")

// Invoker is the subagents.RemoteInvoker of one parent session: it holds
// the session's remote agents, one Agent per agent name, connected on its
// first call and kept until the parent closes, so that the A2A contextId
// (and the taskId of a task waiting for input) carries over from one call
// to the next, as in gemini-cli. It is safe for concurrent use.
type Invoker struct {
	log *slog.Logger

	mu      sync.Mutex // guards the fields below
	entries map[string]*remoteEntry
	closed  bool
	// timeout bounds one call; 0 is subagents.DefaultTimeout.
	// Tests shorten it.
	timeout time.Duration
	// afterFunc, when set, is the time limit's timer (tests).
	afterFunc func(time.Duration, func()) func() bool
}

var _ subagents.RemoteInvoker = (*Invoker)(nil)

// NewInvoker returns the remote agents of one parent session; log (nil:
// slog.Default()) receives the agents' diagnostics.
func NewInvoker(log *slog.Logger) *Invoker {
	if log == nil {
		log = slog.Default()
	}
	return &Invoker{log: log}
}

// Invokers is NewInvoker as compose.Options.RemoteAgents takes it: each
// session built from settings gets its own Invoker.
func Invokers(log *slog.Logger) subagents.RemoteInvoker { return NewInvoker(log) }

// remoteEntry is one agent's connection, done once it is made or failed.
type remoteEntry struct {
	done  chan struct{}
	agent *Agent
	err   error
}

// agent returns the parent's connection to cfg.Definition, making it with
// cfg on first use. A connection that fails is not kept: the next call
// tries again.
func (r *Invoker) agent(ctx context.Context, cfg Config) (*Agent, error) {
	def := cfg.Definition
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, runtime.ErrClosed
		}
		if r.entries == nil {
			r.entries = map[string]*remoteEntry{}
		}
		e, ok := r.entries[def.Name]
		if !ok {
			e = &remoteEntry{done: make(chan struct{})}
			r.entries[def.Name] = e
			r.mu.Unlock()
			e.agent, e.err = New(ctx, cfg)
			r.mu.Lock()
			switch {
			case e.err != nil:
				delete(r.entries, def.Name)
			case r.closed:
				e.agent.Close()
				e.agent, e.err = nil, runtime.ErrClosed
			}
			close(e.done)
			r.mu.Unlock()
			return e.agent, e.err
		}
		r.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		// Another call's connection attempt ended with that call's
		// context: this one tries for itself.
		if e.err != nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) && ctx.Err() == nil {
			continue
		}
		return e.agent, e.err
	}
}

// Close implements subagents.RemoteInvoker: it closes every connection;
// calls after it fail with runtime.ErrClosed.
func (r *Invoker) Close() error {
	r.mu.Lock()
	r.closed = true
	entries := r.entries
	r.entries = nil
	r.mu.Unlock()
	var errs []error
	for _, e := range entries {
		<-e.done
		if e.agent != nil {
			errs = append(errs, e.agent.Close())
		}
	}
	return errors.Join(errs...)
}

// callTimeout is the time limit of one call.
func (r *Invoker) callTimeout() time.Duration {
	if r.timeout > 0 {
		return r.timeout
	}
	return subagents.DefaultTimeout
}

// Invoke implements subagents.RemoteInvoker. It runs one task on a remote
// agent: it sends prompt over the
// parent's connection to the agent and waits for the remote task to
// complete, fail or ask for input, within the subagent time limit. On a
// live stream the task's calls that wait for confirmation go to approver
// through subagents.ChildApprover: named "<agent> › <tool>", the time
// limit paused while the parent decides, declined without an approver.
// The agent's events go to sink, when set, with the A2A contextId as
// their thread id. Failures — a card that cannot be fetched, missing credentials,
// a failed task — are results the parent's model reads (subagents.TerminateError,
// "Agent failed: …"); only a parent that gives up (ctx) makes it return an
// error, after the remote task has been cancelled.
func (r *Invoker) Invoke(ctx context.Context, def agents.Definition, prompt string, approver runtime.Approver, sink func(runtime.Event)) (subagents.Result, error) {
	start := time.Now()
	res := subagents.Result{Agent: def.Name}
	failed := func(why string) (subagents.Result, error) {
		res.TerminateReason, res.Result, res.Duration = subagents.TerminateError, "Agent failed: "+why, time.Since(start)
		return res, nil
	}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	ra, err := r.agent(ctx, Config{Definition: def, Logger: r.log})
	if cause := context.Cause(ctx); cause != nil {
		return res, cause
	}
	if err != nil {
		return failed(err.Error())
	}
	res.ThreadID = ra.ContextID()
	clock := &subagents.Deadline{AfterFunc: r.afterFunc}
	id, err := ra.send(ctx, runtime.TextMessage(prompt), subagents.ChildApprover(approver, def.Label(), clock))
	if err != nil {
		return failed(err.Error())
	}
	timeout := r.callTimeout()
	var timedOut atomic.Bool
	clock.Start(timeout, func() {
		timedOut.Store(true)
		ra.abortStream(id, errTimeout)
	})
	defer clock.Stop()
	stop := context.AfterFunc(ctx, func() { ra.abortStream(id, context.Cause(ctx)) })
	defer stop()

	// The first events of a new conversation come before the agent has
	// named its context: they wait for the thread id.
	var pending []runtime.Event
	forward := func(ev runtime.Event, thread string) {
		if sink == nil {
			return
		}
		ev.Meta = subagents.WithThread(ev.Meta, thread)
		sink(ev)
	}
	var end *runtime.AgentEnd
	var failure *runtime.ErrorData
	for ev, err := range ra.Stream(context.WithoutCancel(ctx), id) {
		if err != nil {
			return res, fmt.Errorf("remote agent %s: %w", def.Name, err)
		}
		if cid, _ := ev.Meta["contextId"].(string); cid != "" {
			res.ThreadID = cid
		}
		switch ev.Type {
		case runtime.EventError:
			if ev.Error.Fatal {
				failure = ev.Error
			}
		case runtime.EventAgentEnd:
			end = ev.AgentEnd
			if cid, _ := end.Data["contextId"].(string); cid != "" {
				res.ThreadID = cid
			}
		}
		if res.ThreadID == "" && ev.Type != runtime.EventAgentEnd {
			pending = append(pending, ev)
			continue
		}
		for _, p := range pending {
			forward(p, res.ThreadID)
		}
		pending = nil
		forward(ev, res.ThreadID)
	}
	res.Duration = time.Since(start)
	if cause := context.Cause(ctx); cause != nil {
		res.TerminateReason = subagents.TerminateAborted
		return res, cause
	}
	if end == nil {
		return failed("the agent's stream ended without a result")
	}
	output, _ := end.Data["result"].(string)
	switch end.Reason {
	case runtime.EndCompleted, runtime.EndElicitation:
		// A question (input-required, auth-required) is the agent's
		// answer for now: the next call, which keeps the task, replies.
		res.TerminateReason, res.Result = subagents.TerminateGoal, output
	case runtime.EndAborted:
		if timedOut.Load() {
			res.TerminateReason = subagents.TerminateTimeout
			res.Result = subagents.TimedOut(timeout)
			return res, nil
		}
		// The connection closed under the call: the parent session is
		// closing.
		res.TerminateReason, res.Result = subagents.TerminateAborted, "Agent was aborted."
		return res, fmt.Errorf("remote agent %s: %w", def.Name, runtime.ErrClosed)
	default:
		why := "the agent failed"
		if failure != nil {
			why = failure.Message
		}
		return failed(why)
	}
	return res, nil
}
