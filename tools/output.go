package tools

import (
	"fmt"
	"strings"

	"github.com/agentry-dev/agentry/internal/ansi"
	"github.com/agentry-dev/agentry/internal/shellexec"
)

// Output kept in memory per stream of a shell command: the first and the
// last streamHeadTailBytes each. A command can print gigabytes; the model
// needs the beginning (what ran) and the end (how it ended).
const streamHeadTailBytes = 1 << 20

// headTail keeps the first and last bytes written to it and counts the
// rest.
type headTail struct {
	max   int
	head  []byte
	tail  []byte
	total int64
}

func newHeadTail(max int) *headTail { return &headTail{max: max} }

func (h *headTail) write(p []byte) {
	h.total += int64(len(p))
	if room := h.max - len(h.head); room > 0 {
		n := min(room, len(p))
		h.head = append(h.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	h.tail = append(h.tail, p...)
	// Trim only when twice over, so trimming costs amortised O(1) a byte.
	if len(h.tail) > 2*h.max {
		h.tail = append([]byte(nil), h.tail[len(h.tail)-h.max:]...)
	}
}

// omitted returns how many bytes were dropped from the middle.
func (h *headTail) omitted() int64 {
	return h.total - int64(len(h.head)) - int64(min(len(h.tail), h.max))
}

// String returns the kept text, marking where bytes were left out.
func (h *headTail) String() string {
	tail := h.tail
	if len(tail) > h.max {
		tail = tail[len(tail)-h.max:]
	}
	if n := h.omitted(); n > 0 {
		// The cut may split a character; ToValidUTF8 tidies the edges.
		return strings.ToValidUTF8(string(h.head), "") +
			fmt.Sprintf("\n\n... [%d bytes omitted: output exceeded the %d MB kept in memory] ...\n\n", n, 2*h.max>>20) +
			strings.ToValidUTF8(string(tail), "")
	}
	return string(h.head) + string(tail)
}

// stripANSI removes terminal control sequences, as gemini-cli does before
// showing command output to the model.
func stripANSI(s string) string { return ansi.Strip(s) }

// wrapUntrusted wraps command output in the <untrusted_context> tags
// gemini-cli's system prompt tells the model to treat as data, not
// instructions.
func wrapUntrusted(s string) string {
	return "<untrusted_context>\n" +
		strings.ReplaceAll(s, "</untrusted_context>", "&lt;/untrusted_context&gt;") +
		"\n</untrusted_context>"
}

// shellOutput accumulates a command's output within bounded memory.
type shellOutput struct {
	stdout, stderr, combined *headTail
}

func newShellOutput() *shellOutput {
	return &shellOutput{newHeadTail(streamHeadTailBytes), newHeadTail(streamHeadTailBytes), newHeadTail(streamHeadTailBytes)}
}

func (o *shellOutput) add(c shellexec.Chunk) {
	if c.Stderr {
		o.stderr.write([]byte(c.Text))
	} else {
		o.stdout.write([]byte(c.Text))
	}
	o.combined.write([]byte(c.Text))
}

// forModel is the combined output as the model sees it.
func (o *shellOutput) forModel() string {
	return strings.TrimSpace(stripANSI(o.combined.String()))
}
