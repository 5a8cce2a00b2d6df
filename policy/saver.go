package policy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Saver persists "always" rules to an auto-saved.toml file (gemini-cli's
// ~/.gemini/policies/auto-saved.toml; it is loaded back at the user tier,
// where its priority 950 makes 4.95). Writes are serial; each rewrites the
// file through a temporary file renamed over it (0600, its directory
// created 0700).
type Saver struct {
	mu   sync.Mutex
	path string
}

// NewSaver returns a Saver writing path.
func NewSaver(path string) *Saver { return &Saver{path: path} }

// Path returns the file the Saver writes.
func (s *Saver) Path() string { return s.path }

// Save adds rules to the file. A rule whose toolName, mcpName,
// commandPrefix and argsPattern equal an existing entry's updates that
// entry's allowRedirection and modes; any other is appended as
// {decision="allow", priority=950, toolName, mcpName?, commandPrefix? |
// argsPattern?, allowRedirection?, modes?}. An MCP rule is saved as its
// mcpName and short tool name. The shell rules of one Save (one answer,
// one rule per root command) share one entry with a commandPrefix list.
//
// A file that does not parse (or whose rule is not a list) is copied to
// <file>.bak (not when it is a symbolic link) and replaced; Save then
// returns an error wrapping ErrCorrupted with gemini-cli's warning text
// although the rules were saved. Other failures return gemini-cli's
// "Failed to persist policy for <tool>: <reason>" and leave the file as it was.
func (s *Saver) Save(rules ...Rule) error {
	if len(rules) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	warn, err := s.save(rules)
	if err != nil {
		return fmt.Errorf("Failed to persist policy for %s: %w", rules[0].ToolName, err)
	}
	return warn
}

// savedEntry is one rule as gemini-cli's policy updater persists it.
type savedEntry struct {
	toolName, mcpName, argsPattern string
	prefixes                       []string
	allowRedirection               bool
	modes                          []Mode
	decision                       Decision
}

func entriesOf(rules []Rule) []savedEntry {
	var out []savedEntry
	for _, r := range rules {
		name := r.ToolName
		if r.MCPName != "" {
			if p := mcpToolPrefix + r.MCPName + "_"; strings.HasPrefix(name, p) {
				name = name[len(p):]
			}
		}
		e := savedEntry{toolName: name, mcpName: r.MCPName, allowRedirection: r.AllowRedirection, modes: r.Modes, decision: r.Decision}
		if r.CommandPrefix != "" {
			if n := len(out); n > 0 && out[n-1].prefixes != nil && out[n-1].toolName == name && out[n-1].mcpName == r.MCPName &&
				slices.Equal(out[n-1].modes, r.Modes) && out[n-1].allowRedirection == r.AllowRedirection && out[n-1].decision == r.Decision {
				out[n-1].prefixes = append(out[n-1].prefixes, r.CommandPrefix)
				continue
			}
			e.prefixes = []string{r.CommandPrefix}
		} else {
			e.argsPattern = r.ArgsPattern
		}
		out = append(out, e)
	}
	return out
}

func (s *Saver) save(rules []Rule) (warning error, err error) {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return nil, err
	}
	doc := map[string]any{}
	data, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var parsed map[string]any
		perr := toml.Unmarshal(data, &parsed)
		if perr == nil {
			if r, ok := parsed["rule"]; ok {
				if _, isList := r.([]any); !isList {
					perr = errors.New("rule is not a list of tables")
				}
			}
		}
		if perr != nil {
			warning = fmt.Errorf("%w: Syntax error found in policy file. Backing up corrupted file to %s.bak and starting fresh.", ErrCorrupted, s.path)
			if st, lerr := os.Lstat(s.path); lerr == nil && st.Mode()&fs.ModeSymlink == 0 {
				if err := writeFileAtomic(s.path+".bak", data); err != nil {
					return nil, fmt.Errorf("backing up the corrupted file: %w", err)
				}
			}
		} else if parsed != nil {
			doc = parsed
		}
	}
	list, _ := doc["rule"].([]any)
	for _, e := range entriesOf(rules) {
		if m := findSaved(list, e); m != nil {
			if e.allowRedirection {
				m["allowRedirection"] = true
			}
			if e.modes != nil {
				m["modes"] = modeStrings(e.modes)
			}
			continue
		}
		list = append(list, e.table())
	}
	doc["rule"] = list
	out, err := toml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(s.path, out); err != nil {
		return nil, err
	}
	return warning, nil
}

func modeStrings(ms []Mode) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

func (e savedEntry) table() map[string]any {
	d := "allow"
	if e.decision != 0 {
		d = e.decision.String()
	}
	t := map[string]any{"decision": d, "priority": int64(alwaysFrac), "toolName": e.toolName}
	if e.mcpName != "" {
		t["mcpName"] = e.mcpName
	}
	if e.prefixes != nil {
		p := make([]any, len(e.prefixes))
		for i, x := range e.prefixes {
			p[i] = x
		}
		t["commandPrefix"] = p
	} else if e.argsPattern != "" {
		t["argsPattern"] = e.argsPattern
	}
	if e.allowRedirection {
		t["allowRedirection"] = true
	}
	if e.modes != nil {
		t["modes"] = modeStrings(e.modes)
	}
	return t
}

// findSaved is gemini-cli's findMatchingRule: same toolName, mcpName,
// commandPrefix and argsPattern.
func findSaved(list []any, e savedEntry) map[string]any {
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		tn, _ := m["toolName"].(string)
		mn, _ := m["mcpName"].(string)
		ap, _ := m["argsPattern"].(string)
		if tn != e.toolName || mn != e.mcpName || ap != e.argsPattern {
			continue
		}
		if !samePrefixes(m["commandPrefix"], e.prefixes) {
			continue
		}
		return m
	}
	return nil
}

func samePrefixes(v any, want []string) bool {
	switch x := v.(type) {
	case nil:
		return want == nil
	case string:
		return false // gemini-cli compares JSON: a string never equals a list
	case []any:
		if want == nil || len(x) != len(want) {
			return false
		}
		for i := range x {
			if s, _ := x[i].(string); s != want[i] {
				return false
			}
		}
		return true
	}
	return false
}

// writeFileAtomic writes data to a new <path>.<16 hex>.tmp (0600, created
// exclusively) and renames it over path.
func writeFileAtomic(path string, data []byte) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := path + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return nil
}
