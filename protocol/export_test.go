package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/grpc"

	"github.com/agentry-dev/agentry/protocol/devtool"
	"github.com/agentry-dev/agentry/runtime"
)

// OutcomeOf is the outcome a ToolCallConfirmation with option id gives.
func OutcomeOf(id string) (runtime.Outcome, error) {
	ans, err := (&approval{}).decide(devtool.ToolCallConfirmation{ToolCallID: "c1", SelectedOptionID: id})
	return ans.outcome, err
}

// CheckWire makes s report through fail every stream response its SSE
// writer encodes differently from encoding/json (what a2a-go's own
// transports write, in 1.0 and, converted by a2av0, in 0.3).
func CheckWire(s *Server, fail func(error)) {
	s.wireCheck = func(got []byte, ev a2a.Event, legacy bool) {
		var result any = a2a.StreamResponse{Event: ev}
		if legacy {
			compat, err := fromV1Event(ev)
			if err != nil {
				fail(fmt.Errorf("a2av0 cannot convert %T: %w", ev, err))
				return
			}
			result = compat
		}
		want, err := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", idOf(got), result})
		if err != nil {
			fail(fmt.Errorf("encoding/json cannot encode %T: %w", ev, err))
			return
		}
		if !bytes.Equal(got, want) {
			fail(fmt.Errorf("SSE writer encoded %T differently from encoding/json:\n got: %s\nwant: %s", ev, got, want))
		}
	}
}

// idOf reads the JSON-RPC id back from an encoded response.
func idOf(resp []byte) json.RawMessage {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(resp, &env)
	return env.ID
}

// WSClients is the number of WebSocket clients following a context.
func WSClients(s *Server, contextID string) int {
	s.mu.Lock()
	c := s.contexts[contextID]
	s.mu.Unlock()
	if c == nil || c.currentHub() == nil {
		return 0
	}
	return c.currentHub().count()
}

// TraceWS has fn see every frame a /ws connection of s reads (read) or
// is about to write; conn identifies the connection.
func TraceWS(s *Server, fn func(read bool, conn any, frame []byte)) { s.wsTrace = fn }

// LiveStreams is the number of live streams following a task now.
func LiveStreams(s *Server, id a2a.TaskID) int {
	t := s.getLive(id)
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lives
}

// TraceGRPC has fn see every message a gRPC stream of s receives (recv)
// or is about to send; stream identifies the stream.
func TraceGRPC(s *Server, fn func(recv bool, stream grpc.ServerStream, m any)) {
	tr := grpcTrace(fn)
	s.grpcTrace.Store(&tr)
}

// RawRequestBytes is the undecoded message a live stream read, as its
// trace sees it; nil for anything else.
func RawRequestBytes(m any) []byte {
	if r, ok := m.(*rawRequest); ok {
		return r.b
	}
	return nil
}

// PublishText publishes n TEXT_CONTENT updates of text on a live task's
// log, in batches of batch, as its run would but without one: what its
// followers then send is the binding's own work.
func PublishText(s *Server, id a2a.TaskID, text string, n, batch int) {
	t := s.getLive(id)
	evs := make([]a2a.Event, 0, batch)
	for i := 0; i < n; i += batch {
		evs = evs[:0]
		for j := i; j < min(n, i+batch); j++ {
			evs = append(evs, t.tr.text(text))
		}
		t.publish(evs...)
	}
}
