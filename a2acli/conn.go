package a2acli

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2aext"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"

	"github.com/agentry-dev/agentry/internal/a2adial"
	"github.com/agentry-dev/agentry/protocol/devtool"
)

// conn is the agent reached over one binding. A stream (send, subscribe)
// yields the task's events until it ends or waits for the caller; its
// caller may stop ranging earlier, which ends the stream.
type conn interface {
	// send sends a message: a new task, or an answer to a waiting one.
	send(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error]
	// subscribe follows a task that is running.
	subscribe(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error]
	// resume follows a task, waiting for input when last seen, that was
	// answered by somebody else.
	resume(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error]
	// get reads a task.
	get(ctx context.Context, task a2a.TaskID) (*a2a.Task, error)
	// cancel cancels a task.
	cancel(ctx context.Context, task a2a.TaskID) error
	// where names the interface, for messages: "JSONRPC 1.0 at http://…".
	where() string
	close() error
}

// sdkConn is a2a-go's client on one of the card's interfaces.
type sdkConn struct {
	client *a2aclient.Client
	iface  *a2a.AgentInterface
}

// tokenInterceptor sends the bearer token with every call: a header on
// the HTTP bindings, metadata on gRPC.
type tokenInterceptor struct {
	a2aclient.PassthroughInterceptor
	token string
}

func (t tokenInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams["authorization"] = []string{"Bearer " + t.token}
	return ctx, nil, nil
}

// dialSDK opens a2a-go's client on the first of ifaces it supports (all
// of the card's for TransportAuto): JSON-RPC, HTTP+JSON or gRPC, A2A 1.0
// or 0.3. The client asks for the development-tool extension unless
// cfg.Plain.
//
// A shared gRPC connection, when not nil, carries the gRPC binding's calls
// (the live transport's GetTask and CancelTask); it stays open when the
// client is closed.
func dialSDK(ctx context.Context, cfg *Config, card *a2a.AgentCard, ifaces []*a2a.AgentInterface, hc *http.Client, shared *grpc.ClientConn) (*sdkConn, error) {
	c := &sdkConn{}
	// The factory that connects records the interface it was given (the
	// client tries the candidates one at a time).
	chosen := func(f a2aclient.TransportFactory) a2aclient.TransportFactory {
		return a2aclient.TransportFactoryFn(func(ctx context.Context, card *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
			t, err := f.Create(ctx, card, iface)
			if err == nil {
				c.iface = iface
			}
			return t, err
		})
	}
	grpcFactory := a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
		if shared != nil {
			return a2agrpc.NewGRPCTransportFromClient(a2apb.NewA2AServiceClient(shared)), nil
		}
		conn, err := a2adial.Dial(iface.URL)
		if err != nil {
			return nil, err
		}
		return a2agrpc.NewGRPCTransport(conn), nil
	})
	jsonrpc := a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
		return a2aclient.NewJSONRPCTransport(iface.URL, hc), nil
	})
	rest := a2aclient.TransportFactoryFn(func(_ context.Context, _ *a2a.AgentCard, iface *a2a.AgentInterface) (a2aclient.Transport, error) {
		u, err := url.Parse(iface.URL)
		if err != nil {
			return nil, err
		}
		return a2aclient.NewRESTTransport(u, hc), nil
	})
	interceptors := []a2aclient.CallInterceptor{}
	if cfg.Token != "" {
		interceptors = append(interceptors, tokenInterceptor{token: cfg.Token})
	}
	if !cfg.Plain {
		interceptors = append(interceptors, a2aext.NewActivator(devtool.URI))
	}
	// The client picks among the card's interfaces: a copy holding only
	// ifaces keeps the card's capabilities and extensions.
	only := *card
	only.SupportedInterfaces = ifaces
	client, err := a2aclient.NewFromCard(ctx, &only,
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithTransport(a2a.TransportProtocolJSONRPC, chosen(jsonrpc)),
		a2aclient.WithTransport(a2a.TransportProtocolHTTPJSON, chosen(rest)),
		a2aclient.WithTransport(a2a.TransportProtocolGRPC, chosen(grpcFactory)),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC, chosen(a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: hc}))),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolHTTPJSON, chosen(a2av0.NewRESTTransportFactory(a2av0.RESTTransportConfig{Client: hc}))),
		a2aclient.WithCallInterceptors(interceptors...),
	)
	if err != nil {
		return nil, err
	}
	c.client = client
	return c, nil
}

func (c *sdkConn) send(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return c.client.SendStreamingMessage(ctx, req)
}

func (c *sdkConn) subscribe(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return c.client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task})
}

func (c *sdkConn) resume(ctx context.Context, task a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return c.subscribe(ctx, task)
}

func (c *sdkConn) get(ctx context.Context, task a2a.TaskID) (*a2a.Task, error) {
	return c.client.GetTask(ctx, &a2a.GetTaskRequest{ID: task})
}

func (c *sdkConn) cancel(ctx context.Context, task a2a.TaskID) error {
	_, err := c.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task})
	return err
}

func (c *sdkConn) where() string { return describe(c.iface) }

func (c *sdkConn) close() error { return c.client.Destroy() }

// describe names an interface: "JSONRPC 1.0 at http://…".
func describe(i *a2a.AgentInterface) string {
	if i == nil {
		return "the agent"
	}
	return fmt.Sprintf("%s %s at %s", i.ProtocolBinding, strings.TrimPrefix(string(i.ProtocolVersion), "v"), i.URL)
}
