// Package liveclient is the client of A2A's bidirectional gRPC method
// SendLiveMessage (docs/live.md): one stream that stays open while its
// task waits for input, so that the answer goes back on it and the task's
// updates keep coming on it, until the server half-closes at a terminal
// state.
//
// Messages and events are a2a-go's types, converted with a2a-go's
// protobuf conversions; errors are a2a-go's, decoded from the gRPC status
// as a2a-go's own gRPC client decodes them, with the status code kept
// (Code).
package liveclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1/pbconv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The method's names.
const (
	// Service is the gRPC service that carries the method, A2A's.
	Service = "lf.a2a.v1.A2AService"
	// MethodName is the method's name within Service.
	MethodName = "SendLiveMessage"
	// Method is the method's full name, as gRPC calls it.
	Method = "/" + Service + "/" + MethodName
)

// StreamDesc returns the method's description: the client and the server
// both stream.
func StreamDesc() *grpc.StreamDesc {
	return &grpc.StreamDesc{StreamName: MethodName, ServerStreams: true, ClientStreams: true}
}

// Option configures a stream.
type Option func(*options)

type options struct {
	md metadata.MD
}

// WithExtensions asks for extensions by URI: the A2A-Extensions service
// parameter, gRPC metadata "a2a-extensions".
func WithExtensions(uris ...string) Option {
	return func(o *options) { o.md.Append(strings.ToLower(a2a.SvcParamExtensions), uris...) }
}

// WithToken sends a bearer token: metadata "authorization: Bearer token".
func WithToken(token string) Option {
	return WithMetadata("authorization", "Bearer "+token)
}

// WithMetadata sends any other metadata (a remote agent's credentials).
// Keys are lower-cased, as gRPC requires.
func WithMetadata(key, value string) Option {
	return func(o *options) { o.md.Append(strings.ToLower(key), value) }
}

// Stream is one live stream: its task's events from Recv, the client's
// later messages through Send. Recv and Send may be called from
// different goroutines at once; Send is also safe for concurrent use.
type Stream struct {
	cs     grpc.ClientStream
	cancel context.CancelFunc

	sendMu sync.Mutex

	mu        sync.Mutex
	taskID    a2a.TaskID
	contextID string
}

// Open starts a live stream on conn and sends first: a message that starts
// a task, continues one (a task id and parts) or, with a task id and no
// parts, reattaches to it (Reconnect). The stream lasts until the server
// half-closes it, ctx ends or Close. A stream the server refuses (a wrong
// token, an unknown task) is opened all the same: its first Recv returns
// the server's error.
func Open(ctx context.Context, conn grpc.ClientConnInterface, first *a2a.SendMessageRequest, opts ...Option) (*Stream, error) {
	o := options{md: metadata.MD{}}
	for _, opt := range opts {
		opt(&o)
	}
	pb, err := toProto(first)
	if err != nil {
		return nil, err
	}
	if len(o.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, metadata.Join(mdFrom(ctx), o.md))
	}
	ctx, cancel := context.WithCancel(ctx)
	cs, err := conn.NewStream(ctx, StreamDesc(), Method)
	if err != nil {
		cancel()
		return nil, decode(err)
	}
	s := &Stream{cs: cs, cancel: cancel}
	if m := first.Message; m != nil {
		s.taskID, s.contextID = m.TaskID, m.ContextID
	}
	// A server that refuses the stream before it reads the first message
	// (a wrong token) ends it: the send sees io.EOF, and Recv the status
	// that says why.
	if err := s.send(pb); err != nil && !errors.Is(err, io.EOF) {
		cancel()
		return nil, err
	}
	return s, nil
}

// Reconnect opens a stream that reattaches to task: an active task's
// current state comes first, then its updates; a finished task's final
// state, then the end.
func Reconnect(ctx context.Context, conn grpc.ClientConnInterface, task a2a.TaskID, opts ...Option) (*Stream, error) {
	m := &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, TaskID: task}
	return Open(ctx, conn, &a2a.SendMessageRequest{Message: m}, opts...)
}

func mdFrom(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}

func toProto(req *a2a.SendMessageRequest) (*a2apb.SendMessageRequest, error) {
	if req == nil || req.Message == nil {
		return nil, errors.New("liveclient: a request needs a message")
	}
	pb, err := pbconv.ToProtoSendMessageRequest(req)
	if err != nil {
		return nil, fmt.Errorf("liveclient: convert the message: %w", err)
	}
	return pb, nil
}

// Send sends a later message: the answer to the task while it waits for
// input. Empty task and context ids mean the stream's own, and an omitted
// configuration the first message's.
func (s *Stream) Send(req *a2a.SendMessageRequest) error {
	pb, err := toProto(req)
	if err != nil {
		return err
	}
	return s.send(pb)
}

func (s *Stream) send(pb *a2apb.SendMessageRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if err := s.cs.SendMsg(pb); err != nil {
		if errors.Is(err, io.EOF) {
			// The server ended the stream; Recv returns why.
			return fmt.Errorf("liveclient: the server has ended the stream: %w", err)
		}
		return decode(err)
	}
	return nil
}

// CloseSend half-closes the client's side: the server sends the task's
// updates until it ends or next waits for input, then ends the stream.
func (s *Stream) CloseSend() error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.cs.CloseSend()
}

// Close cancels the stream: the server sees the client leave.
func (s *Stream) Close() { s.cancel() }

// Recv returns the next event: *a2a.Task, *a2a.Message,
// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent. It returns
// io.EOF once the server has half-closed the stream (the task ended), and
// other errors as a2a-go errors (errors.Is(err, a2a.ErrTaskNotFound) …)
// whose gRPC code Code reads.
func (s *Stream) Recv() (a2a.Event, error) {
	var pb a2apb.StreamResponse
	if err := s.cs.RecvMsg(&pb); err != nil {
		s.cancel()
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, decode(err)
	}
	ev, err := pbconv.FromProtoStreamResponse(&pb)
	if err != nil {
		return nil, fmt.Errorf("liveclient: the server sent an event that is not A2A: %w", err)
	}
	info := ev.TaskInfo()
	s.mu.Lock()
	if info.TaskID != "" {
		s.taskID = info.TaskID
	}
	if info.ContextID != "" {
		s.contextID = info.ContextID
	}
	s.mu.Unlock()
	return ev, nil
}

// Events yields the stream's events until the server half-closes it (the
// end, not yielded) or an error (yielded last).
func (s *Stream) Events() iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for {
			ev, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// TaskID is the stream's task, once the first message or an event named
// it.
func (s *Stream) TaskID() a2a.TaskID {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taskID
}

// ContextID is the stream's context, once the first message or an event
// named it.
func (s *Stream) ContextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contextID
}

// Trailer is the stream's trailer — the activated extensions under
// "a2a-extensions" — once Recv has returned io.EOF or an error.
func (s *Stream) Trailer() metadata.MD { return s.cs.Trailer() }

// Error is an error the server answered with: the a2a-go error its gRPC
// status decodes to, and the status code.
type Error struct {
	Code codes.Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the a2a-go error.
func (e *Error) Unwrap() error { return e.Err }

// GRPCStatus returns the status the server sent, for status.Code and
// status.FromError.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.Code, e.Err.Error()) }

// Code is the gRPC status code of an error Open, Recv or Send returned:
// codes.OK for nil, codes.Unknown for an error that carried none.
func Code(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return status.Code(err)
}

// decode turns a gRPC status error into an *Error wrapping the a2a-go
// error it stands for. a2a-go's table lives in its gRPC client (an
// internal package): its transport decodes the status for us.
func decode(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	t := a2agrpc.NewGRPCTransportFromClient(statusClient{err: st.Err()})
	_, a2aErr := t.GetTask(context.Background(), nil, &a2a.GetTaskRequest{ID: "-"})
	if a2aErr == nil {
		a2aErr = err
	}
	return &Error{Code: st.Code(), Err: a2aErr}
}

// statusClient answers GetTask with a status error, for decode.
type statusClient struct {
	a2apb.A2AServiceClient
	err error
}

func (c statusClient) GetTask(context.Context, *a2apb.GetTaskRequest, ...grpc.CallOption) (*a2apb.Task, error) {
	return nil, c.err
}

// Supported reports whether an agent card, as JSON, declares
// capabilities.bidiStreaming: the agent serves SendLiveMessage on its
// gRPC interface.
func Supported(cardJSON []byte) bool {
	var card struct {
		Capabilities struct {
			BidiStreaming bool `json:"bidiStreaming"`
		} `json:"capabilities"`
	}
	return json.Unmarshal(cardJSON, &card) == nil && card.Capabilities.BidiStreaming
}
