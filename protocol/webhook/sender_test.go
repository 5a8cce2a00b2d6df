package webhook

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// hook is a webhook on this machine counting what it receives.
func hook(t *testing.T) (*httptest.Server, *atomic.Int32, *atomic.Value) {
	t.Helper()
	var n atomic.Int32
	var last atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last.Store(r.Header.Get(tokenHeader) + " " + string(b))
		n.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv, &n, &last
}

func event() a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
}

// TestSenderRefusesAtConnectTime: a webhook named by a host name that
// resolves to this machine when the notification is sent (as after DNS
// rebinding) is never connected to; with AllowPrivate it is delivered.
func TestSenderRefusesAtConnectTime(t *testing.T) {
	srv, n, last := hook(t)
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	s := NewSender(Config{Logger: slog.New(slog.DiscardHandler)})
	for _, u := range []string{byName, srv.URL} {
		err := s.Send(t.Context(), &a2a.PushConfig{URL: u}, event())
		if !errors.Is(err, ErrRefusedAddress) || !strings.Contains(err.Error(), "--allow-private-push") {
			t.Errorf("Send to %s: %v, want %v", u, err, ErrRefusedAddress)
		}
		if err := s.SendPush(t.Context(), &a2a.PushConfig{URL: u}, event()); err != nil {
			t.Errorf("SendPush returns a failed delivery: %v", err)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("the refused webhook received %d requests", got)
	}

	open := NewSender(Config{AllowPrivate: true})
	if err := open.Send(t.Context(), &a2a.PushConfig{URL: byName, Token: "tok"}, event()); err != nil {
		t.Fatalf("Send with AllowPrivate: %v", err)
	}
	tok, body, _ := strings.Cut(last.Load().(string), " ")
	var resp struct {
		StatusUpdate struct {
			TaskID string `json:"taskId"`
		} `json:"statusUpdate"`
	}
	if err := json.Unmarshal([]byte(body), &resp); tok != "tok" || err != nil || resp.StatusUpdate.TaskID != "t1" {
		t.Errorf("delivered token %q, body %s (%v)", tok, body, err)
	}
}

// TestRefuseSpecialDialAddresses: the connect-time check refuses the
// resolved addresses of every special block, IPv6 forms included.
func TestRefuseSpecialDialAddresses(t *testing.T) {
	for _, addr := range []string{"100.64.0.1:443", "198.18.0.1:80", "[64:ff9b::a00:1]:80", "[::ffff:169.254.169.254]:80", "[fe80::1%lo]:80", "[2002:a00:1::]:443"} {
		if err := refuseSpecial("tcp", addr, nil); !errors.Is(err, ErrRefusedAddress) {
			t.Errorf("connecting to %s: %v, want %v", addr, err, ErrRefusedAddress)
		}
	}
	for _, addr := range []string{"93.184.215.14:443", "[2606:4700:4700::1111]:443"} {
		if err := refuseSpecial("tcp", addr, nil); err != nil {
			t.Errorf("connecting to %s: %v", addr, err)
		}
	}
}
