package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentry-dev/agentry/internal/safefs"
)

// SetUserSetting sets one key of the user settings file
// (UserSettingsPath) to value and writes the file back atomically, keeping
// its other keys (in key order: the file is re-encoded with two-space
// indentation). value must have the key's type (bool for ide.enabled). A
// file with comments is refused rather than rewritten without them. This
// is how /ide enable and /ide disable persist ide.enabled, as gemini-cli
// writes its user settings.
func (s *Settings) SetUserSetting(key string, value any) error {
	sch := newSchema()
	n, ok := sch.byKey[key]
	if !ok || n.kind == kindObject || n.kind == kindJSON {
		return fmt.Errorf("config: %q is not a settings key that can be set", key)
	}
	if !settableOutsideUserFile(key) {
		return fmt.Errorf("config: %q is not set by agentry itself; edit %s", key, s.UserSettingsPath())
	}
	if err := checkType(n, value); err != nil {
		return err
	}
	if exp := checkValue(key, value); exp != "" {
		return &Error{Key: key, Expected: exp, Got: fmt.Sprint(value)}
	}
	path := s.UserSettingsPath()
	raw := map[string]any{}
	data, err := readLimited("", path, maxSettingsBytes)
	switch {
	case missing(err):
	case err != nil:
		return readError(path, "settings file", maxSettingsBytes, err)
	default:
		if !bytes.Equal(stripComments(data), data) {
			return &Error{File: path, Key: key, Msg: fmt.Sprintf("the file has comments, which rewriting it would lose; set %q by hand", key)}
		}
		if raw, err = parseSettings(path, data); err != nil {
			return err
		}
	}
	parts := strings.Split(key, ".")
	m := raw
	for _, p := range parts[:len(parts)-1] {
		child, ok := m[p].(map[string]any)
		if !ok {
			if _, exists := m[p]; exists {
				return &Error{File: path, Key: key, Msg: fmt.Sprintf("%q is not an object", p)}
			}
			child = map[string]any{}
			m[p] = child
		}
		m = child
	}
	m[parts[len(parts)-1]] = value
	if _, err := sch.validateFile(path, raw); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(raw); err != nil {
		return fmt.Errorf("config: encoding %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := safefs.WriteFileIn(filepath.Dir(path), filepath.Base(path), buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("config: writing %s: %w", path, err)
	}
	return nil
}

// checkType reports a value whose Go type is not the key's.
func checkType(n *node, value any) error {
	ok := false
	switch n.kind {
	case kindString:
		_, ok = value.(string)
	case kindBool:
		_, ok = value.(bool)
	case kindInt:
		_, ok = value.(int)
	case kindFloat:
		_, ok = value.(float64)
	case kindStrings:
		_, ok = value.([]string)
	}
	if !ok {
		return &Error{Key: n.key, Expected: n.kind.expected(), Got: fmt.Sprintf("%T", value)}
	}
	return nil
}
