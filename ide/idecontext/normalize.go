// Package idecontext gives the model the user's editor context as
// gemini-cli gives it: the context an IDE companion sends
// (ide/contextUpdate) normalised as gemini-cli's ideContextStore does, and
// the text gemini-cli's client puts into the history before a prompt — the
// full context the first time, then only what changed since the last
// prompt, and nothing when nothing changed (docs/ide.md, "Editor
// context").
package idecontext

import (
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/agentry-dev/agentry/ide/idewire"
)

// Limits of gemini-cli's ideContextStore.
const (
	// MaxOpenFiles is the number of most recent files kept.
	MaxOpenFiles = 10
	// MaxSelectedText is the active file's selection's length kept, in
	// UTF-16 code units (JavaScript's string length).
	MaxSelectedText = 16384
	// TruncatedSuffix ends a selection that was cut.
	TruncatedSuffix = "... [TRUNCATED]"
)

// Normalize returns c as gemini-cli's ideContextStore keeps it: files
// sorted by timestamp, newest first (a stable sort, as JavaScript's);
// only the newest file may be active — the others lose isActive, cursor
// and selection, and all do when the newest is not active; the active
// file's selection cut at MaxSelectedText UTF-16 code units followed by
// TruncatedSuffix; the first MaxOpenFiles files kept.
//
// Unlike gemini-cli, which relies on the companion for it, virtual files —
// a path that is not absolute, such as an unsaved buffer's name or an
// editor's settings page — are dropped first, as the companion contract
// requires companions to. c is not modified.
//
// A selection cut inside a surrogate pair ends, as in JavaScript, with a
// lone high surrogate; it is held in its WTF-8 form (three bytes Go's
// UTF-8 decoder rejects), which this package's JSON encoding writes as
// JSON.stringify does (\udXXX).
func Normalize(c idewire.Context) idewire.Context {
	if c.WorkspaceState == nil {
		return c
	}
	ws := *c.WorkspaceState
	out := idewire.Context{WorkspaceState: &ws}
	if len(ws.OpenFiles) == 0 {
		return out
	}
	files := make([]idewire.File, 0, len(ws.OpenFiles))
	for _, f := range ws.OpenFiles {
		if !filepath.IsAbs(f.Path) {
			continue
		}
		if f.Cursor != nil {
			cur := *f.Cursor
			f.Cursor = &cur
		}
		files = append(files, f)
	}
	slices.SortStableFunc(files, func(a, b idewire.File) int {
		switch {
		case a.Timestamp > b.Timestamp:
			return -1
		case a.Timestamp < b.Timestamp:
			return 1
		}
		return 0
	})
	for i := range files {
		if i == 0 && files[0].IsActive {
			files[0].SelectedText = cutSelection(files[0].SelectedText)
			continue
		}
		files[i].IsActive = false
		files[i].Cursor = nil
		files[i].SelectedText = ""
	}
	if len(files) > MaxOpenFiles {
		files = files[:MaxOpenFiles]
	}
	ws.OpenFiles = files
	return out
}

// cutSelection cuts s after MaxSelectedText UTF-16 code units, as
// JavaScript's s.substring(0, 16384) + "... [TRUNCATED]" does when s is
// longer. A byte that is not valid UTF-8 counts as one unit (it stands for
// U+FFFD).
func cutSelection(s string) string {
	if len(s) <= MaxSelectedText {
		return s // fewer bytes than units allowed: fewer units too
	}
	units := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			if units == MaxSelectedText {
				return s[:i] + TruncatedSuffix
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if units+w > MaxSelectedText {
			if units < MaxSelectedText {
				// The cut falls inside a surrogate pair: JavaScript keeps
				// the high surrogate alone.
				hi := 0xD800 + (r-0x10000)>>10
				return s[:i] + wtf8(hi) + TruncatedSuffix
			}
			return s[:i] + TruncatedSuffix
		}
		units += w
		i += size
	}
	return s
}

// wtf8 encodes a surrogate code point as WTF-8 does.
func wtf8(r rune) string {
	return string([]byte{0xE0 | byte(r>>12), 0x80 | byte(r>>6)&0x3F, 0x80 | byte(r)&0x3F})
}
