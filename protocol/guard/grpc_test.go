package guard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// startGRPC serves a grpc.Server with the health service through the guard
// on an h2c listener, as agentry serves gRPC next to its HTTP bindings, and
// returns the listener's address.
func startGRPC(t *testing.T, maxBody int64, register ...func(*grpc.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	g, err := New(Config{
		Token:        testToken,
		AllowedHosts: LoopbackHosts(port),
		MaxBodyBytes: maxBody,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	for _, r := range register {
		r(gs)
	}

	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: g.Wrap(gs), Protocols: &protocols}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		gs.Stop()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func TestGRPCClient(t *testing.T) {
	const limit = 1024
	addr := startGRPC(t, limit)
	_, port, _ := net.SplitHostPort(addr)

	dial := func(t *testing.T, opts ...grpc.DialOption) healthpb.HealthClient {
		t.Helper()
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
		cc, err := grpc.NewClient("passthrough:///"+addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cc.Close() })
		return healthpb.NewHealthClient(cc)
	}
	withToken := func(ctx context.Context, tok string) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	}

	for _, tt := range []struct {
		name      string
		authority string
		token     string
		service   string
		wantCode  codes.Code
		wantInMsg string
	}{
		{name: "no token", wantCode: codes.Unauthenticated, wantInMsg: "missing bearer token"},
		{name: "wrong token", token: "nope", wantCode: codes.Unauthenticated, wantInMsg: "invalid bearer token"},
		{name: "foreign authority", authority: "evil.example:" + port, token: testToken, wantCode: codes.PermissionDenied, wantInMsg: "--allowed-host"},
		{name: "localhost authority", authority: "localhost:" + port, token: testToken, wantCode: codes.OK},
		{name: "ok", token: testToken, wantCode: codes.OK},
		{name: "message over the body limit", token: testToken, service: strings.Repeat("a", 4*limit), wantCode: codes.ResourceExhausted, wantInMsg: "limit is 1024 bytes"},
		{name: "message over the body limit without token", service: strings.Repeat("a", 4*limit), wantCode: codes.Unauthenticated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []grpc.DialOption
			if tt.authority != "" {
				opts = append(opts, grpc.WithAuthority(tt.authority))
			}
			client := dial(t, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if tt.token != "" {
				ctx = withToken(ctx, tt.token)
			}
			resp, err := client.Check(ctx, &healthpb.HealthCheckRequest{Service: tt.service})
			st := status.Convert(err)
			if st.Code() != tt.wantCode {
				t.Fatalf("code = %v (%q), want %v", st.Code(), st.Message(), tt.wantCode)
			}
			if !strings.Contains(st.Message(), tt.wantInMsg) {
				t.Errorf("message %q does not contain %q", st.Message(), tt.wantInMsg)
			}
			if strings.Contains(st.Message(), testToken) {
				t.Errorf("message %q reveals the token", st.Message())
			}
			if tt.wantCode == codes.OK && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("status = %v, want SERVING", resp.GetStatus())
			}
		})
	}

	// A server-streaming call runs through the body limiter's writer, which
	// must pass gRPC's flushes through while the stream is open.
	t.Run("server streaming", func(t *testing.T) {
		client := dial(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, err := client.Watch(withToken(ctx, testToken), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("status = %v, want SERVING", resp.GetStatus())
		}
	})
}

// TestGRPCTrailersOnlyOnTheWire checks with a plain HTTP/2 client that a
// refusal carries its gRPC status in the response headers and has no body
// and no trailers: the trailers-only form.
func TestGRPCTrailersOnlyOnTheWire(t *testing.T) {
	addr := startGRPC(t, 0)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	defer client.CloseIdleConnections()

	// An empty HealthCheckRequest: a 5-byte gRPC message prefix, no payload.
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/grpc.health.v1.Health/Check", strings.NewReader("\x00\x00\x00\x00\x00"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over HTTP/%d, want HTTP/2", resp.ProtoMajor)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status = %d, want 200", resp.StatusCode)
	}
	if got := resp.Header.Get("Grpc-Status"); got != strconv.Itoa(int(codes.Unauthenticated)) {
		t.Errorf("Grpc-Status header = %q, want 16", got)
	}
	if len(body) != 0 || len(resp.Trailer) != 0 {
		t.Errorf("body %q, trailers %v: want neither", body, resp.Trailer)
	}
}

// TestGRPCStreamOverTheLimit: a client-streaming call whose messages
// together pass the body limit after its response has begun ends with
// the guard's ResourceExhausted in the trailers, not gRPC's Unavailable
// for a body that failed to read.
func TestGRPCStreamOverTheLimit(t *testing.T) {
	const limit = 1024
	sink := grpc.ServiceDesc{
		ServiceName: "test.Sink",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{
			StreamName: "Push", ClientStreams: true, ServerStreams: true,
			Handler: func(_ any, stream grpc.ServerStream) error {
				// The response begins before the body is read through.
				if err := stream.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
					return err
				}
				for {
					if err := stream.RecvMsg(&healthpb.HealthCheckRequest{}); err != nil {
						if err == io.EOF {
							return nil
						}
						return err
					}
				}
			},
		}},
	}
	addr := startGRPC(t, limit, func(s *grpc.Server) { s.RegisterService(&sink, struct{}{}) })
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+testToken)
	stream, err := cc.NewStream(ctx, &sink.Streams[0], "/test.Sink/Push")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.RecvMsg(&healthpb.HealthCheckResponse{}); err != nil {
		t.Fatalf("first response: %v", err)
	}
	// Each message is under the limit; together they pass it.
	for range 8 {
		if err := stream.SendMsg(&healthpb.HealthCheckRequest{Service: strings.Repeat("s", 300)}); err != nil {
			break // the server ended the call; RecvMsg says how
		}
	}
	err = stream.RecvMsg(&healthpb.HealthCheckResponse{})
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "limit is 1024 bytes") {
		t.Fatalf("the stream ended with %v, want ResourceExhausted naming the limit", err)
	}
}
