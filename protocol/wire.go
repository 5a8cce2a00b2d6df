package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	a2alegacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/agentry-dev/agentry/internal/jsonstr"
)

// wireEncoder writes stream responses as JSON, byte for byte what
// encoding/json makes of a2a.StreamResponse (A2A 1.0) or, with legacy
// set, of a2av0's conversion of the event to a2a-go's A2A 0.3 types,
// without reflection for the events a session streams most: status
// updates whose message holds text or data parts and whose metadata is
// plain JSON values. Anything else goes through encoding/json.
// encoding/json re-encodes and re-compacts each nested MarshalJSON of
// a2a-go's types, which made it a sixth of the server's CPU with 200
// streams of text deltas.
//
// A wireEncoder is used by one goroutine; its scratch space is reused.
type wireEncoder struct {
	// legacy selects the A2A 0.3 form: a "kind" first in every object,
	// lower-case states and roles, final on status updates, parts never
	// null, text parts without file name or media type.
	legacy bool
	keys   []string
}

// event appends the JSON of the stream response carrying ev.
func (e *wireEncoder) event(b []byte, ev a2a.Event) ([]byte, error) {
	if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && u != nil {
		mark := len(b)
		if !e.legacy {
			b = append(b, `{"statusUpdate":`...)
		}
		if out, ok := e.statusUpdate(b, u); ok {
			if !e.legacy {
				out = append(out, '}')
			}
			return out, nil
		}
		b = b[:mark]
	}
	var v any = a2a.StreamResponse{Event: ev}
	if e.legacy {
		compat, err := fromV1Event(ev)
		if err != nil {
			return b, err
		}
		v = compat
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

// statusUpdate appends a TaskStatusUpdateEvent in its struct field order;
// it reports false for content it leaves to encoding/json.
func (e *wireEncoder) statusUpdate(b []byte, u *a2a.TaskStatusUpdateEvent) ([]byte, bool) {
	state := u.Status.State.String()
	if e.legacy {
		state = string(a2av0.FromV1TaskState(u.Status.State))
		b = append(b, `{"kind":"status-update","contextId":`...)
		b = appendString(b, u.ContextID)
		b = append(b, `,"final":`...)
		b = strconv.AppendBool(b, u.Status.State.Terminal() || u.Status.State == a2a.TaskStateInputRequired)
	} else {
		b = append(b, `{"contextId":`...)
		b = appendString(b, u.ContextID)
	}
	b = append(b, `,"status":{`...)
	if m := u.Status.Message; m != nil {
		b = append(b, `"message":`...)
		var ok bool
		if b, ok = e.message(b, m); !ok {
			return b, false
		}
		b = append(b, ',')
	}
	b = append(b, `"state":`...)
	b = appendString(b, state)
	if ts := u.Status.Timestamp; ts != nil {
		if y := ts.Year(); y < 0 || y > 9999 {
			return b, false // time.Time.MarshalJSON's error case
		}
		b = append(b, `,"timestamp":"`...)
		b = ts.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	b = append(b, `},"taskId":`...)
	b = appendString(b, string(u.TaskID))
	if len(u.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		var ok bool
		if b, ok = e.object(b, u.Metadata); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// message appends an a2a.Message in its struct field order.
func (e *wireEncoder) message(b []byte, m *a2a.Message) ([]byte, bool) {
	role := m.Role.String()
	if e.legacy {
		switch m.Role {
		case a2a.MessageRoleAgent:
			role = string(a2alegacy.MessageRoleAgent)
		case a2a.MessageRoleUser:
			role = string(a2alegacy.MessageRoleUser)
		default:
			return b, false
		}
		b = append(b, `{"kind":"message","messageId":`...)
	} else {
		b = append(b, `{"messageId":`...)
	}
	ok := true
	b = appendString(b, m.ID)
	if m.ContextID != "" {
		b = append(b, `,"contextId":`...)
		b = appendString(b, m.ContextID)
	}
	if len(m.Extensions) > 0 {
		b = append(b, `,"extensions":`...)
		b, _ = e.value(b, m.Extensions)
	}
	if len(m.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		if b, ok = e.object(b, m.Metadata); !ok {
			return b, false
		}
	}
	b = append(b, `,"parts":`...)
	if m.Parts == nil && !e.legacy { // 0.3 parts are never null
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, p := range m.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = e.part(b, p); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if len(m.ReferenceTasks) > 0 {
		b = append(b, `,"referenceTaskIds":[`...)
		for i, id := range m.ReferenceTasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(id))
		}
		b = append(b, ']')
	}
	b = append(b, `,"role":`...)
	b = appendString(b, role)
	if m.TaskID != "" {
		b = append(b, `,"taskId":`...)
		b = appendString(b, string(m.TaskID))
	}
	return append(b, '}'), true
}

// part appends a text or data part as a2a.Part.MarshalJSON flattens it,
// or as a2av0.FromV1Part converts it (a text part loses its file name and
// media type; data must be an object).
func (e *wireEncoder) part(b []byte, p *a2a.Part) ([]byte, bool) {
	if p == nil {
		if e.legacy {
			return b, false // a2av0 cannot convert it
		}
		return append(b, "null"...), true
	}
	ok := true
	switch c := p.Content.(type) {
	case a2a.Text:
		if e.legacy {
			b = append(b, `{"kind":"text","text":`...)
		} else {
			b = append(b, `{"text":`...)
		}
		b = appendString(b, string(c))
	case a2a.Data:
		if e.legacy {
			m, isMap := c.Value.(map[string]any)
			if !isMap {
				return b, false // wrapped in {"value": …} by the conversion
			}
			b = append(b, `{"kind":"data","data":`...)
			if b, ok = e.object(b, m); !ok {
				return b, false
			}
			break
		}
		b = append(b, `{"data":`...)
		if b, ok = e.value(b, c.Value); !ok {
			return b, false
		}
	default:
		return b, false // raw bytes, URLs: rare, left to encoding/json
	}
	if !e.legacy {
		if p.Filename != "" {
			b = append(b, `,"filename":`...)
			b = appendString(b, p.Filename)
		}
		if p.MediaType != "" {
			b = append(b, `,"mediaType":`...)
			b = appendString(b, p.MediaType)
		}
	}
	if len(p.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		if b, ok = e.object(b, p.Metadata); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// object appends a map with its keys sorted, as encoding/json does.
func (e *wireEncoder) object(b []byte, m map[string]any) ([]byte, bool) {
	if m == nil {
		return append(b, "null"...), true
	}
	// Nested maps reuse the scratch slice after the outer keys.
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	defer func() { e.keys = e.keys[:start] }()
	b = append(b, '{')
	ok := true
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		if b, ok = e.value(b, m[k]); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// value appends a JSON value; types other than the plain ones are
// encoded by encoding/json.
func (e *wireEncoder) value(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case float64:
		// Numbers decoded from JSON (a model's call arguments) are
		// float64; encoding/json's float format, NaN and Inf excepted.
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return b, false
		}
		format := byte('f')
		if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, x, format, -1, 64)
		if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1] // e-07 is written e-7
			b = b[:n-1]
		}
		return b, true
	case map[string]any:
		return e.object(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		ok := true
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = e.value(b, el); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case []string:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		return append(b, ']'), true
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// appendString appends s as a JSON string exactly as encoding/json
// writes it by default: HTML-escaped, with invalid UTF-8 replaced and
// U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, jsonstr.HTMLSafe) }

// fromV1Event is a2av0.FromV1Event, which panics on a nil part, with the
// panic as an error: the stream fails with it instead of the server.
func fromV1Event(ev a2a.Event) (compat a2alegacy.Event, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot convert %T to A2A 0.3: %v", ev, r)
		}
	}()
	return a2av0.FromV1Event(ev)
}
