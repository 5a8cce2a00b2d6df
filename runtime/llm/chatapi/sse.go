package chatapi

import (
	"bufio"
	"bytes"
	"io"
)

// maxLine bounds one line of an event stream (32 MiB): a tool call's
// arguments can be long, but a server that never ends a line must not make
// the client buffer without limit.
const maxLine = 32 << 20

// events reads server-sent events (the WHATWG event-stream format) from r
// and yields the data of each: the lines of its data fields joined by "\n".
// Comments (lines starting with ':'), event names, ids and retry fields are
// ignored, an event without data lines is no event, and an event cut off by
// the end of the body is dropped, as the format specifies. Lines end in LF
// or CRLF.
type events struct {
	scn  *bufio.Scanner
	data bytes.Buffer
	has  bool // a data field was seen in the current event
	err  error
}

func newEvents(r io.Reader) *events {
	scn := bufio.NewScanner(r)
	scn.Buffer(nil, maxLine)
	return &events{scn: scn}
}

// next returns the data of the next event, valid until the following call,
// or false at the end of the body or on a read error (see Err).
func (e *events) next() ([]byte, bool) {
	e.data.Reset()
	e.has = false
	for e.scn.Scan() {
		line := e.scn.Bytes()
		if len(line) == 0 {
			if e.has {
				return e.data.Bytes(), true
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		if string(name) != "data" {
			continue // a comment, or a field agentry has no use for
		}
		if e.has {
			e.data.WriteByte('\n')
		}
		e.data.Write(value)
		e.has = true
	}
	e.err = e.scn.Err()
	return nil, false
}

// Err returns the read error that ended the events, or nil at a clean end
// of the body.
func (e *events) Err() error { return e.err }
