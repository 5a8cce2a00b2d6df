package tui

import (
	"strings"
)

// Bounds of the Markdown block still streaming: past them the block is cut
// and its first part printed, so the live region (rendered again on every
// frame) stays small however the model formats its answer.
const (
	maxBlockLines = 32
	maxBlockBytes = 16 << 10
)

// mdBlock is a completed piece of streamed Markdown.
type mdBlock struct {
	text string
	// gap is set when a blank line separated the block from the one
	// before it; a block cut at a bound continues the one before.
	gap bool
}

// blockSplitter cuts a streamed Markdown answer into blocks at blank lines
// outside code fences, after a closing fence, and at the bounds above (a
// fence cut there is closed, and reopened for the rest). Only the last,
// incomplete block stays pending.
type blockSplitter struct {
	pending   string
	scanned   int    // bytes of pending examined: complete lines only
	lines     int    // complete lines in pending
	fence     string // the open fence's marker; "" outside a fence
	fenceLine string // the open fence's opening line
	gap       bool   // a blank line precedes pending
}

// write adds a delta and returns the blocks it completed.
func (s *blockSplitter) write(delta string) []mdBlock {
	s.pending += delta
	var out []mdBlock
	for {
		nl := strings.IndexByte(s.pending[s.scanned:], '\n')
		if nl < 0 {
			break
		}
		lineStart, end := s.scanned, s.scanned+nl+1
		line := s.pending[lineStart : end-1]
		s.scanned = end
		s.lines++
		switch {
		case s.fence == "":
			if m := fenceOpen(line); m != "" {
				s.fence, s.fenceLine = m, line
			} else if strings.TrimSpace(line) == "" {
				out = s.cut(out, lineStart, true)
				s.cutRest(end)
			} else if s.lines >= maxBlockLines {
				out = s.cut(out, end, false)
				s.cutRest(end)
			}
		case fenceClose(line, s.fence):
			s.fence = ""
			out = s.cut(out, end, false)
			s.cutRest(end)
		case s.lines >= maxBlockLines:
			out = s.cutFence(out, end)
		}
	}
	if len(s.pending) > maxBlockBytes {
		// One huge line: cut at its last space, or anywhere.
		low := 0
		if s.fence != "" {
			low = len(s.fenceLine) + 1
		}
		at := strings.LastIndexByte(s.pending, '\n') + 1
		if at <= low {
			at = strings.LastIndexAny(s.pending, " \n") + 1
		}
		if at <= low {
			at = len(s.pending)
		}
		if s.fence != "" {
			out = s.cutFence(out, at)
		} else {
			out = s.cut(out, at, false)
			s.cutRest(at)
		}
	}
	return out
}

// cut emits pending[:end] as a block; blank says a blank line ends it.
func (s *blockSplitter) cut(out []mdBlock, end int, blank bool) []mdBlock {
	text := s.pending[:end]
	if strings.TrimSpace(text) != "" {
		out = append(out, mdBlock{text: text, gap: s.gap})
		s.gap = false
	}
	if blank {
		s.gap = true
	}
	return out
}

// cutRest drops pending[:end] (emitted or blank) from pending.
func (s *blockSplitter) cutRest(end int) {
	if end >= len(s.pending) {
		s.pending = ""
	} else {
		s.pending = s.pending[end:]
	}
	s.scanned = 0
	s.lines = 0
	// Lines after end were not examined yet: scanning restarts there.
}

// cutFence emits the open fence's text up to end, closed, and keeps the
// rest reopened with the same opening line.
func (s *blockSplitter) cutFence(out []mdBlock, end int) []mdBlock {
	text := s.pending[:end]
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	out = append(out, mdBlock{text: text + s.fence + "\n", gap: s.gap})
	s.gap = false
	rest := s.pending[end:]
	s.pending = s.fenceLine + "\n" + rest
	s.scanned = len(s.fenceLine) + 1
	s.lines = 1
	return out
}

// live is the pending text to render: an open fence is closed.
func (s *blockSplitter) live() string {
	if s.fence != "" {
		p := s.pending
		if !strings.HasSuffix(p, "\n") {
			p += "\n"
		}
		return p + s.fence + "\n"
	}
	return s.pending
}

// flush ends the answer: what is pending becomes the last block.
func (s *blockSplitter) flush() []mdBlock {
	var out []mdBlock
	if strings.TrimSpace(s.pending) != "" {
		out = append(out, mdBlock{text: s.live(), gap: s.gap})
	}
	*s = blockSplitter{}
	return out
}

// fenceOpen returns the marker of a line that opens a code fence: three or
// more backticks or tildes after at most three spaces.
func fenceOpen(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || t[0] == '`' && strings.ContainsRune(t[n:], '`') {
		return ""
	}
	return t[:n]
}

// fenceClose reports whether line closes the fence opened with marker.
func fenceClose(line, marker string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	t = strings.TrimRight(t, " \t")
	return len(t) >= len(marker) && strings.Trim(t, marker[:1]) == ""
}
