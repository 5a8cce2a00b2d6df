package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// CheckWire makes s report through fail every stream response its SSE
// writer encodes differently from encoding/json (what a2a-go's own
// transport writes).
func CheckWire(s *Server, fail func(error)) {
	s.wireCheck = func(got []byte, ev a2a.Event) {
		want, err := json.Marshal(struct {
			JSONRPC string             `json:"jsonrpc"`
			ID      json.RawMessage    `json:"id"`
			Result  a2a.StreamResponse `json:"result"`
		}{"2.0", idOf(got), a2a.StreamResponse{Event: ev}})
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
