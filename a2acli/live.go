package a2acli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/agentry-dev/agentry/internal/a2adial"
	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// drainTimeout bounds how long closing waits for the server to end a
// half-closed stream.
const drainTimeout = 5 * time.Second

// liveConn is A2A's bidirectional SendLiveMessage on the card's gRPC
// interface (protocol/liveclient): one stream per task, which stays open
// while the task waits for input, so that the answer goes back on it.
// GetTask and CancelTask go through a2a-go's gRPC client on the same
// connection.
type liveConn struct {
	conn  *grpc.ClientConn
	sdk   *sdkConn
	iface *a2a.AgentInterface
	opts  []liveclient.Option

	mu sync.Mutex
	st *liveclient.Stream // the task's stream, once opened
}

// dialLive opens the gRPC connection to the card's first gRPC interface.
func dialLive(ctx context.Context, cfg *Config, card *a2a.AgentCard, iface *a2a.AgentInterface, hc *http.Client) (*liveConn, error) {
	conn, err := a2adial.Dial(iface.URL)
	if err != nil {
		return nil, err
	}
	sdk, err := dialSDK(ctx, cfg, card, []*a2a.AgentInterface{iface}, hc, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	l := &liveConn{conn: conn, sdk: sdk, iface: iface}
	if cfg.Token != "" {
		l.opts = append(l.opts, liveclient.WithToken(cfg.Token))
	}
	if !cfg.Plain {
		l.opts = append(l.opts, liveclient.WithExtensions(devtool.URI))
	}
	return l, nil
}

// stream returns the open stream, nil before the first message.
func (l *liveConn) stream() *liveclient.Stream {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// open starts the stream with its first message.
func (l *liveConn) open(ctx context.Context, first *a2a.SendMessageRequest) (*liveclient.Stream, error) {
	st, err := liveclient.Open(ctx, l.conn, first, l.opts...)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.st = st
	l.mu.Unlock()
	return st, nil
}

// send opens the stream with the task's first message, or sends an
// answer on the open stream, and yields the events that follow. A caller
// that stops at input-required leaves the stream open for the answer.
func (l *liveConn) send(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		st := l.stream()
		if st == nil {
			var err error
			if st, err = l.open(ctx, req); err != nil {
				yield(nil, unimplemented(err))
				return
			}
		} else if err := st.Send(req); err != nil {
			yield(nil, err)
			return
		}
		read(st, yield)
	}
}

// subscribe reattaches to the task on a new stream: its state now, then
// its updates.
func (l *liveConn) subscribe(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	m := &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, TaskID: task}
	return l.send(ctx, &a2a.SendMessageRequest{Message: m})
}

// resume reads on the open stream, which the server goes on writing the
// task's events to whoever answered; without one, it reattaches.
func (l *liveConn) resume(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	st := l.stream()
	if st == nil {
		return l.subscribe(ctx, task)
	}
	return func(yield func(a2a.Event, error) bool) { read(st, yield) }
}

// read yields the stream's events until the server half-closes it (the
// task ended) or the caller stops.
func read(st *liveclient.Stream, yield func(a2a.Event, error) bool) {
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if !yield(ev, err) || err != nil {
			return
		}
	}
}

// unimplemented explains a server without the method.
func unimplemented(err error) error {
	if liveclient.Code(err) == codes.Unimplemented {
		return fmt.Errorf("%w; the agent does not serve SendLiveMessage (its card would declare capabilities.bidiStreaming): use --transport grpc", err)
	}
	return err
}

func (l *liveConn) get(ctx context.Context, task a2a.TaskID) (*a2a.Task, error) {
	return l.sdk.get(ctx, task)
}

// cancel cancels the task with CancelTask, then closes the stream.
func (l *liveConn) cancel(ctx context.Context, task a2a.TaskID) error {
	err := l.sdk.cancel(ctx, task)
	if st := l.stream(); st != nil {
		st.Close()
	}
	return err
}

func (l *liveConn) where() string { return "SendLiveMessage on " + describe(l.iface) }

// close half-closes an open stream before closing it: a task left
// waiting for input stays parked on the server, which would abort it if
// the client just left.
func (l *liveConn) close() error {
	if st := l.stream(); st != nil {
		if st.CloseSend() == nil {
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				for _, err := range st.Events() {
					if err != nil {
						return
					}
				}
			}()
			t := time.NewTimer(drainTimeout)
			select {
			case <-drained:
			case <-t.C:
			}
			t.Stop()
		}
		st.Close()
	}
	l.sdk.close()
	return l.conn.Close()
}
