package loopdetect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// maxCycle is the longest cycle of tool calls looked for; gemini-cli
// hard-codes it independently of the threshold.
const maxCycle = 5

// AddToolCall records a tool call the model requested and reports whether
// it completes a loop: the last k·ToolCallThreshold calls being the last k
// calls repeated, for some cycle length k from 1 to 5. A tool call also
// restarts content tracking, since chanting happens within one stream of
// text. While a detection is latched the call is not recorded and the
// latched detection is returned.
func (d *Detector) AddToolCall(name string, args map[string]any) (Detection, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.latched {
		return d.last, true
	}
	d.resetContent()
	argsJSON := stringifyArgs(args)
	sum := sha256.Sum256([]byte(name + ":" + argsJSON))
	if !d.toolCallLoop(hex.EncodeToString(sum[:])) {
		return Detection{}, false
	}
	return d.latch(Detection{
		Kind:   KindToolCalls,
		Detail: fmt.Sprintf("Repeated tool call: %s with arguments %s", name, argsJSON),
	}), true
}

// toolCallLoop appends key and checks for a repeating cycle; it is
// gemini-cli's checkToolCallLoop.
func (d *Detector) toolCallLoop(key string) bool {
	r := d.cfg.ToolCallThreshold
	d.toolKeys = append(d.toolKeys, key)
	if keep := maxCycle * r; len(d.toolKeys) > keep {
		// Shift in place rather than reslice, so the buffer is reused.
		n := copy(d.toolKeys, d.toolKeys[len(d.toolKeys)-keep:])
		d.toolKeys = d.toolKeys[:n]
	}
	keys := d.toolKeys
	n := len(keys)
	for k := 1; k <= maxCycle; k++ {
		need := k * r
		if n < need {
			continue
		}
		cycle := keys[n-k:]
		match := true
		for i := range need {
			if keys[n-need+i] != cycle[i%k] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// stringifyArgs stands in for JavaScript's JSON.stringify(args). It cannot
// be exact: JSON.stringify keeps an object's insertion order, which for a
// model's arguments is the order the model wrote them in, and a Go map has
// no order. encoding/json sorts map keys instead, so two calls that differ
// only in key order (which gemini-cli would count as different) are the
// same call here. Like JSON.stringify it leaves <, > and & unescaped. A nil
// map is "{}", the same as no arguments, since gemini-cli always has an
// object. Values JSON cannot encode fall back to fmt's (also key-sorted)
// rendering so the key stays deterministic.
func stringifyArgs(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprint(args)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
