package liveclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/protocol/liveclient"
)

// script is a scripted SendLiveMessage server: it records what the client
// sends and runs fn on the stream.
type script struct {
	fn func(s grpc.ServerStream) error

	mu  sync.Mutex
	md  metadata.MD
	got []*a2a.SendMessageRequest
}

func (sc *script) recv(t *testing.T, s grpc.ServerStream) *a2a.SendMessageRequest {
	t.Helper()
	var pb a2apb.SendMessageRequest
	if err := s.RecvMsg(&pb); err != nil {
		t.Errorf("server: receive: %v", err)
		return nil
	}
	req, err := pbconv.FromProtoSendMessageRequest(&pb)
	if err != nil {
		t.Errorf("server: convert: %v", err)
		return nil
	}
	sc.mu.Lock()
	sc.got = append(sc.got, req)
	sc.mu.Unlock()
	return req
}

func send(t *testing.T, s grpc.ServerStream, ev a2a.Event) {
	t.Helper()
	pb, err := pbconv.ToProtoStreamResponse(ev)
	if err != nil {
		t.Fatalf("server: convert %T: %v", ev, err)
	}
	if err := s.SendMsg(pb); err != nil {
		t.Errorf("server: send: %v", err)
	}
}

// serve starts a gRPC server on loopback with the method and returns a
// connection to it.
func serve(t *testing.T, sc *script) *grpc.ClientConn {
	t.Helper()
	desc := grpc.ServiceDesc{
		ServiceName: liveclient.Service,
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{
			StreamName: liveclient.MethodName, ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, s grpc.ServerStream) error {
				md, _ := metadata.FromIncomingContext(s.Context())
				sc.mu.Lock()
				sc.md = md
				sc.mu.Unlock()
				return sc.fn(s)
			},
		}},
	}
	g := grpc.NewServer()
	g.RegisterService(&desc, struct{}{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func textMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

func status2(id a2a.TaskID, ctxID string, state a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: state}}
}

// A task that waits for input is answered on the same stream, and the
// stream ends when the server half-closes.
func TestAnswerOnTheSameStream(t *testing.T) {
	sc := &script{}
	sc.fn = func(s grpc.ServerStream) error {
		first := sc.recv(t, s)
		if first == nil {
			return nil
		}
		send(t, s, &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}})
		send(t, s, status2("t1", "c1", a2a.TaskStateInputRequired))
		if sc.recv(t, s) == nil {
			return nil
		}
		send(t, s, status2("t1", "c1", a2a.TaskStateWorking))
		send(t, s, status2("t1", "c1", a2a.TaskStateCompleted))
		return nil
	}
	conn := serve(t, sc)
	st, err := liveclient.Open(t.Context(), conn, textMessage("book a flight"),
		liveclient.WithToken("s3cret"), liveclient.WithExtensions("https://example.com/ext/v1"), liveclient.WithMetadata("X-Api-Key", "k"))
	if err != nil {
		t.Fatal(err)
	}
	var states []a2a.TaskState
	for ev, err := range st.Events() {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
			if e.Status.State == a2a.TaskStateInputRequired {
				// Ids left out: the stream's own.
				if err := st.Send(textMessage("yes")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateInputRequired, a2a.TaskStateWorking, a2a.TaskStateCompleted}
	if len(states) != len(want) {
		t.Fatalf("states %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("states %v, want %v", states, want)
		}
	}
	if st.TaskID() != "t1" || st.ContextID() != "c1" {
		t.Errorf("ids %q %q, want t1 c1", st.TaskID(), st.ContextID())
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.got) != 2 {
		t.Fatalf("the server got %d messages on the stream, want 2", len(sc.got))
	}
	if m := sc.got[1].Message; m.TaskID != "" || m.ContextID != "" {
		t.Errorf("the answer named task %q context %q; a live stream's later messages may leave them out", m.TaskID, m.ContextID)
	}
	if got := sc.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer s3cret" {
		t.Errorf("authorization %q", got)
	}
	if got := sc.md.Get("a2a-extensions"); len(got) != 1 || got[0] != "https://example.com/ext/v1" {
		t.Errorf("a2a-extensions %q", got)
	}
	if got := sc.md.Get("x-api-key"); len(got) != 1 || got[0] != "k" {
		t.Errorf("x-api-key %q", got)
	}
}

// errorEcho is an a2asrv.RequestHandler whose GetTask fails with err: the
// server renders its errors through a2a-go's own gRPC mapping.
type errorEcho struct {
	a2asrv.RequestHandler
	err error
}

func (e errorEcho) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, e.err
}

func grpcError(err error) error {
	_, gerr := a2agrpc.NewHandler(errorEcho{err: err}).GetTask(context.Background(), &a2apb.GetTaskRequest{Id: "-"})
	return gerr
}

// Errors come back as a2a-go's, with the gRPC code kept.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		code     codes.Code
	}{
		{"not found", a2a.NewError(a2a.ErrTaskNotFound, "task t9 is unknown"), a2a.ErrTaskNotFound, codes.NotFound},
		{"invalid", a2a.NewError(a2a.ErrInvalidParams, "bad part"), a2a.ErrInvalidParams, codes.InvalidArgument},
		{"precondition", status.Error(codes.FailedPrecondition, "already answered"), nil, codes.FailedPrecondition},
		{"unimplemented", status.Error(codes.Unimplemented, "no"), a2a.ErrMethodNotFound, codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &script{}
			sc.fn = func(s grpc.ServerStream) error {
				sc.recv(t, s)
				if _, ok := status.FromError(tc.err); ok {
					return tc.err
				}
				return grpcError(tc.err)
			}
			st, err := liveclient.Reconnect(t.Context(), serve(t, sc), "t9")
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.Recv()
			if err == nil || errors.Is(err, io.EOF) {
				t.Fatalf("Recv: %v, want an error", err)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v is not %v", err, tc.sentinel)
			}
			if got := liveclient.Code(err); got != tc.code {
				t.Errorf("code %v, want %v", got, tc.code)
			}
			if got := status.Code(err); got != tc.code {
				t.Errorf("status.Code %v, want %v", got, tc.code)
			}
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if m := sc.got[0].Message; m.TaskID != "t9" || len(m.Parts) != 0 {
				t.Errorf("a reconnect sent task %q with %d parts, want t9 and none", m.TaskID, len(m.Parts))
			}
		})
	}
}

func TestCode(t *testing.T) {
	if got := liveclient.Code(nil); got != codes.OK {
		t.Errorf("Code(nil) = %v", got)
	}
	if got := liveclient.Code(errors.New("plain")); got != codes.Unknown {
		t.Errorf("Code(plain) = %v", got)
	}
}

// A message the client cannot convert is refused before anything is sent.
func TestOpenRefusesNoMessage(t *testing.T) {
	sc := &script{fn: func(grpc.ServerStream) error { return nil }}
	if _, err := liveclient.Open(t.Context(), serve(t, sc), &a2a.SendMessageRequest{}); err == nil {
		t.Fatal("Open without a message succeeded")
	}
}

// Close ends the stream for the server, which sees its context cancelled.
func TestCloseCancels(t *testing.T) {
	done := make(chan error, 1)
	sc := &script{}
	sc.fn = func(s grpc.ServerStream) error {
		sc.recv(t, s)
		send(t, s, &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
		<-s.Context().Done()
		done <- s.Context().Err()
		return nil
	}
	st, err := liveclient.Open(t.Context(), serve(t, sc), textMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	// The task's first event says the server has the message: a cancel
	// before it could end the stream before the handler runs.
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("server context: %v, want canceled", err)
	}
}

func TestSupported(t *testing.T) {
	for card, want := range map[string]bool{
		`{"name":"a","capabilities":{"streaming":true,"bidiStreaming":true}}`: true,
		`{"name":"a","capabilities":{"streaming":true}}`:                      false,
		`{"capabilities":{"bidiStreaming":"yes"}}`:                            false,
		`not json`: false,
	} {
		if got := liveclient.Supported([]byte(card)); got != want {
			t.Errorf("Supported(%s) = %v, want %v", card, got, want)
		}
	}
}

// A stream the server refuses at once, without reading the first message,
// reports the server's status on Recv, not the send's end of stream.
func TestRefusedBeforeTheFirstMessage(t *testing.T) {
	sc := &script{fn: func(grpc.ServerStream) error {
		return grpcError(a2a.NewError(a2a.ErrUnauthenticated, "missing or wrong bearer token"))
	}}
	conn := serve(t, sc)
	// A first message larger than HTTP/2's initial window waits for the
	// server, which ends the stream instead of reading it: the send
	// always sees the end.
	big := textMessage(strings.Repeat("x", 1<<20))
	for range 5 {
		st, err := liveclient.Open(t.Context(), conn, big)
		if err != nil {
			t.Fatalf("Open: %v; want the refusal from Recv", err)
		}
		_, err = st.Recv()
		if !errors.Is(err, a2a.ErrUnauthenticated) || liveclient.Code(err) != codes.Unauthenticated {
			t.Fatalf("Recv: %v (code %v), want the server's Unauthenticated", err, liveclient.Code(err))
		}
	}
}
