package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"
)

// GRPCService is the gRPC service whose calls the router reads: A2A
// 1.0's, which agentry serves (SendLiveMessage included).
const GRPCService = "lf.a2a.v1.A2AService"

// DefaultMaxMessageBytes is Config.MaxMessageBytes's default, the
// protocol server's (a2a.maxBodyBytes).
const DefaultMaxMessageBytes = 4 << 20

// gRPC status codes the router answers with (google.golang.org/grpc/codes).
const (
	grpcInternal          = 13
	grpcUnavailable       = 14
	grpcResourceExhausted = 8
	grpcUnimplemented     = 12
)

// isGRPC reports whether r is a gRPC call, which the protocol server
// hands to its grpc.Server.
func isGRPC(r *http.Request) bool {
	return r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
}

// grpcRefusal is a gRPC status the router answers a call with.
type grpcRefusal struct {
	code int
	msg  string
}

func (e *grpcRefusal) Error() string { return e.msg }

// grpcContext returns the context a gRPC call is about, and the task of
// a SubscribeToTask, from its first
// message: a message's context_id (else its task_id's task), a task
// method's task, ListTasks's context_id. The message read is put back in
// front of the body, whose later messages keep streaming. A call of
// another service, a call without a message, or a message that does not
// parse names no context: the server answers it.
func (n *Node) grpcContext(r *http.Request) (contextID, subTask string, err error) {
	method, ok := strings.CutPrefix(r.URL.Path, "/"+GRPCService+"/")
	if !ok {
		return "", "", nil
	}
	msg, err := n.firstMessage(r)
	if err != nil || msg == nil {
		return "", "", err
	}
	var ctxID, task string
	switch method {
	case "SendMessage", "SendStreamingMessage", "SendLiveMessage":
		var m a2apb.SendMessageRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		ctxID, task = m.GetMessage().GetContextId(), m.GetMessage().GetTaskId()
	case "GetTask":
		var m a2apb.GetTaskRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetId()
	case "CancelTask":
		var m a2apb.CancelTaskRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetId()
	case "SubscribeToTask":
		var m a2apb.SubscribeToTaskRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task, subTask = m.GetId(), m.GetId()
	case "CreateTaskPushNotificationConfig":
		var m a2apb.TaskPushNotificationConfig
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetTaskId()
	case "GetTaskPushNotificationConfig":
		var m a2apb.GetTaskPushNotificationConfigRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetTaskId()
	case "DeleteTaskPushNotificationConfig":
		var m a2apb.DeleteTaskPushNotificationConfigRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetTaskId()
	case "ListTaskPushNotificationConfigs":
		var m a2apb.ListTaskPushNotificationConfigsRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		task = m.GetTaskId()
	case "ListTasks":
		var m a2apb.ListTasksRequest
		if proto.Unmarshal(msg, &m) != nil {
			return "", "", nil
		}
		ctxID = m.GetContextId()
	}
	if ctxID != "" {
		return ctxID, "", nil
	}
	ctxID, err = n.taskContext(r.Context(), task)
	return ctxID, subTask, err
}

// firstMessage reads the call's first length-prefixed message (a flag
// byte, a big-endian 32-bit length, the message) and puts the bytes read
// back in front of the body. It returns nil, and no error, when the body
// ends or fails before a whole message: the server answers that.
func (n *Node) firstMessage(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	var hdr [5]byte
	k, err := io.ReadFull(r.Body, hdr[:])
	if err != nil {
		putBack(r, hdr[:k], err)
		return nil, nil
	}
	if hdr[0] != 0 {
		putBack(r, hdr[:], nil)
		enc := r.Header.Get("Grpc-Encoding")
		return nil, &grpcRefusal{grpcUnimplemented, fmt.Sprintf(
			"the replicas' router reads a call's first message to find its context and cannot read one compressed (grpc-encoding %q): send it uncompressed", enc)}
	}
	size := binary.BigEndian.Uint32(hdr[1:])
	if int64(size) > n.cfg.MaxMessageBytes {
		putBack(r, hdr[:], nil)
		return nil, &grpcRefusal{grpcResourceExhausted, fmt.Sprintf(
			"a message of %d bytes is larger than the server accepts (%d)", size, n.cfg.MaxMessageBytes)}
	}
	buf := make([]byte, 5+int(size))
	copy(buf, hdr[:])
	k, err = io.ReadFull(r.Body, buf[5:])
	if err != nil {
		putBack(r, buf[:5+k], err)
		return nil, nil
	}
	putBack(r, buf, nil)
	return buf[5:], nil
}

// putBack puts read in front of what is left of r's body, followed by
// err when reading stopped on one.
func putBack(r *http.Request, read []byte, err error) {
	rest := r.Body
	var rd io.Reader = io.MultiReader(bytes.NewReader(read), rest)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		rd = io.MultiReader(bytes.NewReader(read), errReader{err})
	}
	r.Body = readCloser{rd, rest}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// grpcError answers a gRPC call with a trailers-only response: HTTP 200,
// the status and message in the headers, no body.
func grpcError(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(code))
	h.Set("Grpc-Message", encodeGRPCMessage(msg))
	w.WriteHeader(http.StatusOK)
}

// grpcCode is the gRPC status of a routing failure answered over HTTP
// with code.
func grpcCode(code int) int {
	switch code {
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return grpcUnavailable
	default:
		return grpcInternal
	}
}

// encodeGRPCMessage percent-encodes a grpc-message value as the gRPC
// HTTP/2 protocol requires: bytes outside printable ASCII, and '%'.
func encodeGRPCMessage(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= ' ' && c <= '~' && c != '%' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// newGRPCProxy returns the proxy of gRPC calls: over HTTP/2, cleartext
// to an http:// replica, each message written through as it comes both
// ways, the trailers (grpc-status) copied.
func newGRPCProxy(n *Node, rt http.RoundTripper) *proxy {
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		p.SetHTTP2(true)
		t.Protocols = &p
		t.MaxIdleConnsPerHost = 64
		rt = t
	}
	return n.newProxyOver(rt, "cluster: forwarding a gRPC call failed", func(_ *proxy, w http.ResponseWriter, _ *http.Request, t *target, err error) {
		grpcError(w, grpcUnavailable, notAnswered(t, err))
	})
}
