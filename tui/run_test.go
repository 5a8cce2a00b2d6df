package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
)

// syncBuffer is a bytes.Buffer safe for the program's writer and the
// test, which can wait for a text to be written.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waitFor string
	seen    chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.seen != nil && strings.Contains(s.b.String(), s.waitFor) {
		close(s.seen)
		s.seen = nil
	}
	return n, err
}

// wait returns a channel closed once text was written.
func (s *syncBuffer) wait(text string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(s.b.String(), text) {
		close(ch)
		return ch
	}
	s.waitFor, s.seen = text, ch
	return ch
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runTerminal runs Run on a pipe and returns the pipe's writer, the
// output and Run's result.
func runTerminal(ctx context.Context, cfg Config) (*io.PipeWriter, *syncBuffer, <-chan error) {
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	cfg.Input, cfg.Output = pr, out
	cfg.Width, cfg.Height = 80, 24
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, cfg)
		pr.Close()
	}()
	return pw, out, errc
}

func TestRunSendsAndQuits(t *testing.T) {
	s := newTestSession()
	s.sent = make(chan struct{}, 1)
	s.scripts = [][]runtime.Event{{textEv("Hello **there**."), endEv(runtime.EndCompleted)}}
	cfg := testConfig(s)
	cfg.Env = append(cfg.Env, "TTY_FORCE=1", "NO_COLOR=1")
	ap := NewApprover()
	cfg.Approver = ap
	pw, out, errc := runTerminal(t.Context(), cfg)
	seen := out.wait("there")
	io.WriteString(pw, "hi\r")
	<-s.sent
	<-seen
	io.WriteString(pw, "/quit\r")
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := sentText(t, s.sentMessages()[0]); got[0] != "hi" {
		t.Errorf("sent %q", got)
	}
	o := out.String()
	if !strings.Contains(o, "session 3f2a9c1e") || !strings.Contains(o, "hi") {
		t.Errorf("no footer or prompt in the output: %q", o)
	}
	if hasColour(o) {
		t.Errorf("colours under NO_COLOR: %q", o)
	}
	// The terminal is gone: nobody is asked.
	if _, err := ap.Approve(t.Context(), runtime.ApprovalRequest{Tool: "t"}); !errors.Is(err, runtime.ErrNoHuman) {
		t.Errorf("Approve after Run: %v", err)
	}
}

func TestRunEndsWithContext(t *testing.T) {
	s := newTestSession()
	s.sent = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	pw, _, errc := runTerminal(ctx, testConfig(s))
	io.WriteString(pw, "hi\r")
	<-s.sent
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestRunColours: an error is coloured on a colour terminal (so that the
// NO_COLOR cases prove something), and not under NO_COLOR with any
// non-empty value (colorprofile alone takes only booleans).
func TestRunColours(t *testing.T) {
	for _, tc := range []struct {
		env     string
		colours bool
	}{
		{"", true},
		{"NO_COLOR=yes", false},
	} {
		t.Run(tc.env, func(t *testing.T) {
			s := newTestSession()
			s.sent = make(chan struct{}, 1)
			s.scripts = [][]runtime.Event{{{Type: runtime.EventError, Error: &runtime.ErrorData{Message: "boom", Fatal: true}}, endEv(runtime.EndFailed)}}
			cfg := testConfig(s)
			cfg.Env = append(cfg.Env, "TTY_FORCE=1")
			if tc.env != "" {
				cfg.Env = append(cfg.Env, tc.env)
			}
			pw, out, errc := runTerminal(t.Context(), cfg)
			seen := out.wait("boom")
			io.WriteString(pw, "hi\r")
			<-s.sent
			<-seen
			io.WriteString(pw, "/quit\r")
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if got := hasColour(out.String()); got != tc.colours {
				t.Errorf("colours %v, want %v: %q", got, tc.colours, out.String())
			}
		})
	}
}

func TestRunNeedsSession(t *testing.T) {
	if err := Run(t.Context(), Config{}); !errors.Is(err, ErrNoSession) {
		t.Errorf("err = %v", err)
	}
}
