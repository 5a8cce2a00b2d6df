package protocol_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentry-dev/agentry/compose"
	"github.com/agentry-dev/agentry/config"
	"github.com/agentry-dev/agentry/protocol"
	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// Serve sessions over A2A and talk to them with a2a-go's client, as any A2A
// client would (agentry serve adds the bearer token, Host and Origin
// checks and connection limits in front of the same handler).
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "agentry-example")
	defer os.RemoveAll(dir)
	replay := filepath.Join(dir, "model.jsonl")
	os.WriteFile(replay, []byte(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello over A2A."}]},"finishReason":"STOP"}]}]}`+"\n"), 0o600)
	s := config.Defaults()
	s.Workspace, s.Home = dir, filepath.Join(dir, ".agentry")
	s.Session.Store = config.SessionStoreMemory
	s.Model.Name = "replay:" + replay

	httpSrv := httptest.NewUnstartedServer(nil)
	srv, err := protocol.New(protocol.Config{
		// Each A2A context is a session built from the settings.
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			ws := s
			ws.Workspace = r.Workspace
			return compose.FromSettings(ctx, &ws, compose.Options{SessionID: r.ContextID, Approver: r.Approver})
		},
		Workspace: dir,
		Model:     s.Model.Name,
		BaseURL:   "http://" + httpSrv.Listener.Addr().String(),
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	httpSrv.Config.Handler = srv.Handler()
	httpSrv.Start()
	defer httpSrv.Close()

	ctx := context.Background()
	client, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{a2a.NewAgentInterface(httpSrv.URL+"/", a2a.TransportProtocolJSONRPC)})
	if err != nil {
		panic(err)
	}
	defer client.Destroy()
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Say hello"))})
	if err != nil {
		panic(err)
	}
	task := res.(*a2a.Task)
	fmt.Println("state:", task.Status.State)
	for _, art := range task.Artifacts {
		for _, p := range art.Parts {
			fmt.Printf("%s: %s\n", art.Name, p.Text())
		}
	}
	// Output:
	// state: TASK_STATE_COMPLETED
	// answer: Hello over A2A.
}

// A task on a gRPC SendLiveMessage stream (docs/live.md): the first
// message starts it, its updates come on the stream, and the server ends
// the stream when the task ends. A task that asked for a confirmation
// would wait on the open stream for the answer (Stream.Send).
func ExampleServer_Handler_sendLiveMessage() {
	dir, _ := os.MkdirTemp("", "agentry-example")
	defer os.RemoveAll(dir)
	replay := filepath.Join(dir, "model.jsonl")
	os.WriteFile(replay, []byte(`{"method":"generateContentStream","response":[{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello over a live stream."}]},"finishReason":"STOP"}]}]}`+"\n"), 0o600)
	s := config.Defaults()
	s.Workspace, s.Home = dir, filepath.Join(dir, ".agentry")
	s.Session.Store = config.SessionStoreMemory
	s.Model.Name = "replay:" + replay

	httpSrv := httptest.NewUnstartedServer(nil)
	// gRPC is plain-text HTTP/2 on the same port.
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	httpSrv.Config.Protocols = &p
	srv, err := protocol.New(protocol.Config{
		NewSession: func(ctx context.Context, r protocol.SessionRequest) (protocol.Session, error) {
			ws := s
			ws.Workspace = r.Workspace
			return compose.FromSettings(ctx, &ws, compose.Options{SessionID: r.ContextID, Approver: r.Approver})
		},
		Workspace: dir,
		Model:     s.Model.Name,
		Logger:    slog.New(slog.DiscardHandler),
		// A task left waiting for an answer on a live stream is cancelled
		// after this long (a2a.live.idleMinutes).
		Live: protocol.LiveConfig{IdleTimeout: 5 * time.Minute},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	httpSrv.Config.Handler = srv.Handler()
	httpSrv.Start()
	defer httpSrv.Close()

	conn, err := grpc.NewClient(httpSrv.Listener.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Say hello"))
	st, err := liveclient.Open(context.Background(), conn, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		panic(err)
	}
	for ev, err := range st.Events() {
		if err != nil {
			panic(err)
		}
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			// The answer in chunks; the last, empty, closes it.
			for _, p := range e.Artifact.Parts {
				if p.Text() != "" {
					fmt.Printf("%s: %s\n", e.Artifact.Name, p.Text())
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println("state:", e.Status.State)
		}
	}
	fmt.Println("the stream ended")
	// Output:
	// state: TASK_STATE_WORKING
	// answer: Hello over a live stream.
	// state: TASK_STATE_COMPLETED
	// the stream ended
}
