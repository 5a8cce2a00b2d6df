// Package testserver defines the MCP server the mcptools tests talk to, so
// that the stdio binary (../main.go) and the in-process streamable HTTP
// server serve exactly the same tools.
package testserver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PNG is the payload of the image tool: a 1x1 transparent PNG.
var PNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
	0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// Options configures New.
type Options struct {
	// Prefix is prepended to every tool name.
	Prefix string
	// Spawn, if set, backs the "spawn" tool: it starts a child process and
	// returns its pid.
	Spawn func() (int, error)
	// Crash, if set, backs the "crash" tool; it should not return.
	Crash func()
	// PageSize, when positive, is the page size of the server's lists,
	// so that clients must follow cursors.
	PageSize int
}

// Resources the server offers: a text one and a binary one.
const (
	TextURI  = "test://greeting"
	BlobURI  = "test://pixel"
	Greeting = "hello from a resource"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type sleepIn struct {
	Seconds float64 `json:"seconds"`
}

type noIn struct{}

// Weather is the structured result of the weather tool.
type Weather struct {
	City  string  `json:"city"`
	TempC float64 `json:"temp_c"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// New returns a server with the tools echo, add, progress, image, fail,
// sleep, env, and (when configured) crash and spawn.
//
// It also offers two resources (TextURI, BlobURI) and a "mutate" tool that
// replaces the add tool by a multiply tool and returns once the client has
// asked for the new list after notifications/tools/list_changed.
func New(o Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "agentry-test", Version: "v0.0.1"}, &mcp.ServerOptions{PageSize: o.PageSize})
	p := o.Prefix
	// listed hears of every tools/list request, so that mutate can return
	// only once the client has asked for the new list.
	listed := make(chan struct{}, 1)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case listed <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	s.AddResource(&mcp.Resource{URI: TextURI, Name: "greeting", Description: "A greeting.", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: TextURI, MIMEType: "text/plain", Text: Greeting}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: BlobURI, Name: "pixel", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: BlobURI, MIMEType: "image/png", Blob: PNG}}}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "mutate", Description: "Replaces the add tool by a multiply tool."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
			select { // a listing from before the change does not count
			case <-listed:
			default:
			}
			s.RemoveTools(p + "add")
			mcp.AddTool(s, &mcp.Tool{Name: p + "multiply", Description: "Multiplies a and b."},
				func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
					return text(fmt.Sprint(in.A * in.B)), nil, nil
				})
			// The notification goes out after the SDK's short debounce;
			// the client then lists the tools again.
			select {
			case <-listed:
			case <-time.After(10 * time.Second):
				return text("mutated, but the client did not list the tools again"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return text("mutated"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "add", Description: "Adds a and b."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "progress", Description: "Reports progress three times."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			if tok == nil {
				return text("no progress token"), nil, nil
			}
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
				}); err != nil {
					return nil, nil, err
				}
			}
			// A ping is handled by the client after the notifications sent
			// before it, so when it returns the client has seen all three:
			// the tests can expect every one of them without timing.
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, nil, err
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "image", Description: "Returns an image."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here it is"},
				&mcp.ImageContent{MIMEType: "image/png", Data: PNG},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "weather", Description: "Reports the weather as structured content."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, Weather, error) {
			return nil, Weather{City: "Oslo", TempC: -3.5}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "fail", Description: "Always fails."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "sleep", Description: "Sleeps, honouring cancellation."},
		func(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			// Say when sleeping starts, so a test can cancel mid-call.
			if tok := req.Params.GetProgressToken(); tok != nil {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Message: "sleeping",
				}); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "env", Description: "Reports the server's pid, working directory and MCPTOOLS_TEST env var."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			wd, _ := os.Getwd()
			return text(fmt.Sprintf("pid=%d cwd=%s var=%s", os.Getpid(), wd, os.Getenv("MCPTOOLS_TEST"))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: p + "environ", Description: "Returns the server's whole environment, one variable a line."},
		func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
			return text(strings.Join(os.Environ(), "\n")), nil, nil
		})
	if o.Crash != nil {
		mcp.AddTool(s, &mcp.Tool{Name: p + "crash", Description: "Exits the server mid-call."},
			func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
				o.Crash()
				return text("not crashed"), nil, nil
			})
	}
	if o.Spawn != nil {
		mcp.AddTool(s, &mcp.Tool{Name: p + "spawn", Description: "Starts a child process and returns its pid."},
			func(context.Context, *mcp.CallToolRequest, noIn) (*mcp.CallToolResult, any, error) {
				pid, err := o.Spawn()
				if err != nil {
					return nil, nil, err
				}
				return text(fmt.Sprint(pid)), nil, nil
			})
	}
	return s
}
