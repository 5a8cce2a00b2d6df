package ide

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type seen struct {
	method string
	params string
}

// filter runs in through an eventFilter with the given limit, reading
// the source and the filter a byte at a time when slow is set.
func filter(t *testing.T, in string, limit int, slow bool) (string, []seen) {
	t.Helper()
	var got []seen
	var src io.Reader = strings.NewReader(in)
	if slow {
		src = iotest.OneByteReader(src)
	}
	f := newEventFilter(io.NopCloser(src), func(m string, p json.RawMessage) {
		got = append(got, seen{m, string(p)})
	})
	f.limit = limit
	var r io.Reader = f
	if slow {
		r = iotest.OneByteReader(f)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the filter: %v", err)
	}
	return string(out), got
}

// TestEventFilter is the filter's golden test: which events of a stream it
// takes out, and the exact bytes the SDK reads instead.
func TestEventFilter(t *testing.T) {
	const in = ": ok\n\n" +
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ide/contextUpdate\",\"params\":{\"workspaceState\":{}}}\n\n" +
		"event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffAccepted\",\r\ndata: \"params\":{\"filePath\":\"/a\",\"content\":\"x\"}}\r\n\r\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ide/diffAccepted\",\"params\":{}}\n\n" +
		"event: other\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"data: [{\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\"}]\n\n" +
		"not a field\n\n" +
		"id: 9\nretry: 100\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffClosed\",\"params\":{\"filePath\":\"/b\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\",\"params\":{\"filePath\":\"/cut\"}}"
	const want = ": ok\n\n" +
		"id: 1\n\n" +
		"event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ide/diffAccepted\",\"params\":{}}\n\n" +
		"event: other\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"data: [{\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\"}]\n\n" +
		"not a field\n\n" +
		"id: 9\nretry: 100\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\",\"params\":{\"filePath\":\"/cut\"}}"
	wantSeen := []seen{
		{"ide/contextUpdate", `{"workspaceState":{}}`},
		{"ide/diffAccepted", `{"filePath":"/a","content":"x"}`},
		{"ide/diffClosed", `{"filePath":"/b"}`},
		{"ide/diffRejected", ``},
	}
	for _, slow := range []bool{false, true} {
		out, got := filter(t, in, maxEventBytes, slow)
		if out != want {
			t.Errorf("slow=%v: the SDK reads\n%q\nwant\n%q", slow, out, want)
		}
		if len(got) != len(wantSeen) {
			t.Fatalf("slow=%v: notifications %q, want %q", slow, got, wantSeen)
		}
		for i := range got {
			if got[i] != wantSeen[i] {
				t.Errorf("slow=%v: notification %d = %q, want %q", slow, i, got[i], wantSeen[i])
			}
		}
	}
}

// TestEventFilterLimit: an event larger than the limit goes on unread,
// byte for byte, and the filter takes the next one out again.
func TestEventFilterLimit(t *testing.T) {
	big := "data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/contextUpdate\",\"params\":{\"x\":\"" + strings.Repeat("y", 200) + "\"}}\n\n"
	small := "data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffRejected\",\"params\":{\"filePath\":\"/a\"}}\n\n"
	for _, slow := range []bool{false, true} {
		out, got := filter(t, big+small, 100, slow)
		if out != big {
			t.Errorf("slow=%v: the SDK reads %q, want the large event alone", slow, out)
		}
		if len(got) != 1 || got[0].method != "ide/diffRejected" {
			t.Errorf("slow=%v: notifications %q", slow, got)
		}
	}
	// Lines longer than the reader's buffer are read in pieces.
	long := "data: {\"jsonrpc\":\"2.0\",\"method\":\"ide/diffAccepted\",\"params\":{\"filePath\":\"/a\",\"content\":\"" + strings.Repeat("z", 100<<10) + "\"}}\n\n"
	out, got := filter(t, long, maxEventBytes, false)
	if out != "" || len(got) != 1 || len(got[0].params) < 100<<10 {
		t.Errorf("a 100 KiB notification: SDK reads %d bytes, %d notifications", len(out), len(got))
	}
}
