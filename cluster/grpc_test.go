package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentry-dev/agentry/internal/pgtest"
)

// fakeA2A is an A2A gRPC service that says, in its trailers, which
// replica served a call and whether it came forwarded.
type fakeA2A struct {
	a2apb.UnimplementedA2AServiceServer
	name   string
	served *atomic.Int64
}

func (f *fakeA2A) trailer(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	fwd := ""
	if v := md.Get(strings.ToLower(ForwardedHeader)); len(v) > 0 {
		fwd = v[0]
	}
	f.served.Add(1)
	_ = grpc.SetTrailer(ctx, metadata.Pairs("x-served-by", f.name, "x-saw-forwarded", fwd))
}

func (f *fakeA2A) GetTask(ctx context.Context, req *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	f.trailer(ctx)
	return &a2apb.Task{Id: req.GetId(), ContextId: "seen by " + f.name}, nil
}

func (f *fakeA2A) CancelTask(ctx context.Context, req *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	f.trailer(ctx)
	return nil, status.Errorf(codes.FailedPrecondition, "%s cannot cancel %s", f.name, req.GetId())
}

func (f *fakeA2A) SubscribeToTask(req *a2apb.SubscribeToTaskRequest, st grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	f.trailer(st.Context())
	for i := range 3 {
		if err := st.Send(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Task{Task: &a2apb.Task{Id: fmt.Sprintf("%s-%d", req.GetId(), i)}}}); err != nil {
			return err
		}
	}
	return nil
}

// live answers each message of a bidirectional stream with its text
// prefixed by the replica's name, until the client half-closes.
func (f *fakeA2A) live(st grpc.ServerStream) error {
	f.trailer(st.Context())
	for {
		var req a2apb.SendMessageRequest
		if err := st.RecvMsg(&req); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		text := f.name + ": " + req.GetMessage().GetParts()[0].GetText()
		if err := st.SendMsg(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Message{Message: &a2apb.Message{
			MessageId: text, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}},
		}}}); err != nil {
			return err
		}
	}
}

var liveDesc = grpc.StreamDesc{StreamName: "SendLiveMessage", ServerStreams: true, ClientStreams: true}

// startGRPCReplica starts a replica whose protocol handler serves gRPC
// with fakeA2A (SendLiveMessage included) and other requests as
// startReplica's does.
func startGRPCReplica(t testing.TB, dsn, name string) *replicaServer {
	t.Helper()
	var rs *replicaServer
	g := grpc.NewServer()
	svc := &fakeA2A{name: name}
	desc := a2apb.A2AService_ServiceDesc
	live := liveDesc
	live.Handler = func(srv any, st grpc.ServerStream) error { return srv.(*fakeA2A).live(st) }
	desc.Streams = append(slices.Clone(desc.Streams), live)
	g.RegisterService(&desc, svc)
	rs = startReplicaTB(t, dsn, name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isGRPC(r) {
			g.ServeHTTP(w, r)
			return
		}
		w.Header().Set("X-Served-By", name)
	}))
	svc.served = &rs.served
	return rs
}

func dialReplica(t testing.TB, rs *replicaServer) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(rs.srv.URL, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func TestGRPCForwarding(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startGRPCReplica(t, dsn, "a"), startGRPCReplica(t, dsn, "b")
	holdTaskA(t, a, b)
	client := a2apb.NewA2AServiceClient(dialReplica(t, b))
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer shared-token")

	checkTrailer := func(t *testing.T, tr metadata.MD, want, wantFwd string) {
		t.Helper()
		if got := tr.Get("x-served-by"); len(got) != 1 || got[0] != want {
			t.Fatalf("served by %v, want %q (trailer %v)", got, want, tr)
		}
		if got := tr.Get("x-saw-forwarded"); len(got) != 1 || got[0] != wantFwd {
			t.Fatalf("%s seen as %v, want %q", ForwardedHeader, got, wantFwd)
		}
	}

	t.Run("unary", func(t *testing.T) {
		var tr metadata.MD
		task, err := client.GetTask(ctx, &a2apb.GetTaskRequest{Id: "task-a"}, grpc.Trailer(&tr))
		if err != nil {
			t.Fatal(err)
		}
		if task.GetContextId() != "seen by a" {
			t.Fatalf("answer %v", task)
		}
		checkTrailer(t, tr, "a", "b")
	})

	t.Run("error status", func(t *testing.T) {
		var tr metadata.MD
		_, err := client.CancelTask(ctx, &a2apb.CancelTaskRequest{Id: "task-a"}, grpc.Trailer(&tr))
		if s, _ := status.FromError(err); s.Code() != codes.FailedPrecondition || s.Message() != "a cannot cancel task-a" {
			t.Fatalf("error %v; want the holder's FailedPrecondition", err)
		}
		checkTrailer(t, tr, "a", "b")
	})

	t.Run("unknown task served here", func(t *testing.T) {
		var tr metadata.MD
		if _, err := client.GetTask(ctx, &a2apb.GetTaskRequest{Id: "nope"}, grpc.Trailer(&tr)); err != nil {
			t.Fatal(err)
		}
		checkTrailer(t, tr, "b", "")
	})

	t.Run("server stream", func(t *testing.T) {
		st, err := client.SubscribeToTask(ctx, &a2apb.SubscribeToTaskRequest{Id: "task-a"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for {
			ev, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ev.GetTask().GetId())
		}
		if strings.Join(ids, ",") != "task-a-0,task-a-1,task-a-2" {
			t.Fatalf("events %v", ids)
		}
		checkTrailer(t, st.Trailer(), "a", "b")
	})

	t.Run("live stream", func(t *testing.T) {
		st, err := dialReplica(t, b).NewStream(ctx, &liveDesc, "/"+GRPCService+"/SendLiveMessage")
		if err != nil {
			t.Fatal(err)
		}
		// Only the first message names the context; the second, a
		// reply sent after the first answer came back, rides the same
		// forwarded stream.
		for i, m := range []*a2apb.Message{
			{ContextId: "ctx-a", Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "first"}}}},
			{Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "second"}}}},
		} {
			if err := st.SendMsg(&a2apb.SendMessageRequest{Message: m}); err != nil {
				t.Fatal(err)
			}
			var ev a2apb.StreamResponse
			if err := st.RecvMsg(&ev); err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			want := "a: " + m.GetParts()[0].GetText()
			if got := ev.GetMessage().GetParts()[0].GetText(); got != want {
				t.Fatalf("answer %d = %q, want %q", i, got, want)
			}
		}
		if err := st.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if err := st.RecvMsg(&a2apb.StreamResponse{}); !errors.Is(err, io.EOF) {
			t.Fatalf("end of stream: %v", err)
		}
		checkTrailer(t, st.Trailer(), "a", "b")
	})

	t.Run("not forwarded twice", func(t *testing.T) {
		before := a.served.Load()
		_, err := client.GetTask(metadata.AppendToOutgoingContext(ctx, strings.ToLower(ForwardedHeader), "c"), &a2apb.GetTaskRequest{Id: "task-a"})
		if s, _ := status.FromError(err); s.Code() != codes.Unavailable || !strings.Contains(s.Message(), "not forwarded again") || !strings.Contains(s.Message(), a.srv.URL) {
			t.Fatalf("error %v; want Unavailable naming the owner's URL and the loop guard", err)
		}
		if a.served.Load() != before {
			t.Fatal("the call reached a")
		}
	})

	t.Run("compressed first message", func(t *testing.T) {
		// A raw call: the flag byte says compressed.
		hc := &http.Client{Transport: b.Node.grpcProxy.rp.Transport}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.srv.URL+"/"+GRPCService+"/GetTask", bytes.NewReader([]byte{1, 0, 0, 0, 1, 0}))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Grpc-Encoding", "snappy")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.Header.Get("Grpc-Status") != "12" || !strings.Contains(res.Header.Get("Grpc-Message"), "snappy") {
			t.Fatalf("status %q, message %q; want Unimplemented naming the encoding", res.Header.Get("Grpc-Status"), res.Header.Get("Grpc-Message"))
		}
	})
}

// TestGRPCForwardToUnreachableOwner: an owner whose lease lives but whose
// address does not answer is named in an Unavailable status.
func TestGRPCForwardToUnreachableOwner(t *testing.T) {
	dsn := pgtest.Schema(t, "cluster", "agentry_cluster_test_")
	a, b := startGRPCReplica(t, dsn, "a"), startGRPCReplica(t, dsn, "b")
	if _, err := a.Acquire(t.Context(), "ctx-a"); err != nil {
		t.Fatal(err)
	}
	a.srv.Close()
	client := a2apb.NewA2AServiceClient(dialReplica(t, b))
	_, err := client.SendMessage(t.Context(), &a2apb.SendMessageRequest{Message: &a2apb.Message{ContextId: "ctx-a"}})
	if s, _ := status.FromError(err); s.Code() != codes.Unavailable || !strings.Contains(s.Message(), a.srv.URL) {
		t.Fatalf("error %v; want Unavailable naming %s", err, a.srv.URL)
	}
}

// BenchmarkForwardGRPC: a gRPC GetTask for a task of a context held by
// replica a, called at a (served there) and at b (which reads the first
// message, resolves the task's context, finds a and forwards the call
// over HTTP/2). It reports both p50s and what forwarding adds.
func BenchmarkForwardGRPC(b *testing.B) {
	dsn := pgtest.Schema(b, "cluster", "agentry_cluster_bench_")
	ra, rb := startGRPCReplica(b, dsn, "a"), startGRPCReplica(b, dsn, "b")
	holdTaskA(b, ra, rb)
	clients := []a2apb.A2AServiceClient{a2apb.NewA2AServiceClient(dialReplica(b, ra)), a2apb.NewA2AServiceClient(dialReplica(b, rb))}
	do := func(i int) time.Duration {
		start := time.Now()
		task, err := clients[i].GetTask(b.Context(), &a2apb.GetTaskRequest{Id: "task-a"})
		if err != nil || task.GetContextId() != "seen by a" {
			b.Fatalf("GetTask: %v, %v", task, err)
		}
		return time.Since(start)
	}
	for range 50 {
		do(0)
		do(1)
	}
	direct := make([]time.Duration, 0, b.N)
	forwarded := make([]time.Duration, 0, b.N)
	for b.Loop() {
		direct = append(direct, do(0))
		forwarded = append(forwarded, do(1))
	}
	slices.Sort(direct)
	slices.Sort(forwarded)
	d, f := percentile(direct, 50), percentile(forwarded, 50)
	b.ReportMetric(float64(d.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(f.Microseconds()), "forwarded-p50-µs")
	b.ReportMetric(float64((f - d).Microseconds()), "added-p50-µs")
	b.ReportMetric(float64((percentile(forwarded, 99) - percentile(direct, 99)).Microseconds()), "added-p99-µs")
}
