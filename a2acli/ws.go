package a2acli

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/protocol/wsclient"
)

// wsDialTimeout bounds the WebSocket handshake.
const wsDialTimeout = 30 * time.Second

// wsName is the client's name on /ws, shown in the terminal of a shared
// session beside its prompts.
const wsName = "agentry a2a"

// wsConn is agentry's live session endpoint, /ws (docs/ws.md): A2A
// JSON-RPC over one WebSocket. The development-tool extension is always
// active there.
type wsConn struct {
	c   *wsclient.Conn
	url string
}

// dialWS opens the connection. The session's events of turns this client
// did not start arrive as notifications, which it reads and drops: it
// follows its own task only.
//
// A connection follows one session (docs/ws.md): the one --context names,
// or else the one of the task it sends to or subscribes to first.
func dialWS(ctx context.Context, cfg *Config, rawURL string, hc *http.Client) (*wsConn, error) {
	ctx, cancel := context.WithTimeout(ctx, wsDialTimeout)
	defer cancel()
	opts := wsclient.Options{Token: cfg.Token, Name: wsName, ContextID: cfg.ContextID, HTTPClient: hc, Logger: cfg.Logger}
	c, err := wsclient.Dial(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	go func() {
		for n, err := range c.Events() {
			if err != nil {
				return
			}
			cfg.Logger.Debug("a2a: a session event of another turn", "method", n.Method, "eventId", n.EventID)
		}
	}()
	return &wsConn{c: c, url: rawURL}, nil
}

// events turns a request's frames into its events.
func (w *wsConn) events(ctx context.Context, method string, params any) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for f, err := range w.c.Stream(ctx, method, params) {
			if err != nil {
				yield(nil, err)
				return
			}
			if f.Event == nil {
				yield(nil, fmt.Errorf("%s: a response that is not an A2A event: %.200s", method, f.Result))
				return
			}
			if !yield(f.Event, nil) {
				return
			}
		}
	}
}

func (w *wsConn) send(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return w.events(ctx, "SendStreamingMessage", req)
}

func (w *wsConn) subscribe(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return w.events(ctx, "SubscribeToTask", &a2a.SubscribeToTaskRequest{ID: task})
}

func (w *wsConn) resume(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return w.subscribe(ctx, task)
}

func (w *wsConn) get(ctx context.Context, task a2a.TaskID) (*a2a.Task, error) {
	var t a2a.Task
	if err := w.c.Call(ctx, "GetTask", &a2a.GetTaskRequest{ID: task}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func (w *wsConn) cancel(ctx context.Context, task a2a.TaskID) error {
	return w.c.Call(ctx, "CancelTask", &a2a.CancelTaskRequest{ID: task}, nil)
}

func (w *wsConn) where() string { return fmt.Sprintf("%s at %s", WSBinding, w.url) }

func (w *wsConn) close() error {
	if err := w.c.Close(); err != nil && !errors.Is(err, wsclient.ErrClosed) {
		return err
	}
	return nil
}
