package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// geminiDir is gemini-cli's directory under the user's home and in a
// workspace.
const geminiDir = ".gemini"

// sharedGeminiKeys are the agentry settings keys that gemini-cli 0.61.0's
// settings schema also defines, with the same meaning. Only these are read
// from gemini-cli's settings files; every other key there is gemini-cli's
// own (ui.theme, security.auth, …) and is reported, never an error.
func sharedGeminiKeys() map[string]bool {
	return map[string]bool{
		"model.name": true, "model.maxSessionTurns": true, "model.compressionThreshold": true,
		"model.disableLoopDetection":  true,
		"general.defaultApprovalMode": true, "general.maxAttempts": true,
		"output.format":    true,
		"context.fileName": true, "context.includeDirectories": true,
		"tools.allowed": true, "tools.exclude": true, "tools.core": true, "tools.confirmationRequired": true,
		"mcp.allowed": true, "mcp.excluded": true, "policyPaths": true, "adminPolicyPaths": true,
		"security.disableAlwaysAllow": true, "security.enablePermanentToolApproval": true,
		"telemetry.enabled": true, "telemetry.otlpEndpoint": true, "telemetry.otlpProtocol": true, "telemetry.outfile": true,
		"hooks": true, "hooksConfig.enabled": true, "hooksConfig.disabled": true, "hooksConfig.notifications": true,
		"mcpServers": true, "ide.enabled": true,
		"security.environmentVariableRedaction.allowed": true, "security.environmentVariableRedaction.blocked": true,
		"security.environmentVariableRedaction.enabled": true,
	}
}

// userOnlyGeminiKey reports whether key is taken from gemini-cli's user
// settings file only: security.* is never taken from a workspace.
func userOnlyGeminiKey(key string) bool {
	return strings.HasPrefix(key, "security.")
}

// geminiLayer reads one of gemini-cli's settings files as a settings layer:
// the shared keys with valid values (in a workspace's file, without the
// user-only ones). The file belongs to gemini-cli, so
// nothing in it is an error for agentry: keys agentry does not share and
// values it cannot use are left out and reported in one warning (nil when
// there is nothing to report). A structured value (mcpServers, hooks) is
// taken entry by entry, so that one server agentry cannot run does not
// cost the others.
func (s *schema) geminiLayer(file string, raw map[string]any, user bool) (map[string]any, string) {
	shared := sharedGeminiKeys()
	if !user {
		for k := range shared {
			if userOnlyGeminiKey(k) {
				delete(shared, k)
			}
		}
	}
	g := geminiWalk{s: s, file: file, shared: shared, out: map[string]any{}}
	g.walk(s.root, raw)
	var parts []string
	if len(g.unused) > 0 {
		sort.Strings(g.unused)
		parts = append(parts, "ignoring gemini-cli settings agentry does not share: "+strings.Join(g.unused, ", ")+
			" (agentry's own settings go in ~/.agentry/settings.json)")
	}
	if len(g.invalid) > 0 {
		parts = append(parts, "ignoring values agentry cannot use: "+strings.Join(g.invalid, "; "))
	}
	if len(parts) == 0 {
		return g.out, ""
	}
	return g.out, file + ": " + strings.Join(parts, "; ")
}

// geminiWalk collects a gemini-cli settings file's shared values.
type geminiWalk struct {
	s       *schema
	file    string
	shared  map[string]bool
	out     map[string]any
	unused  []string // keys agentry does not share
	invalid []string // shared keys with values agentry cannot use, and why
}

func (g *geminiWalk) walk(parent *node, obj map[string]any) {
	for _, name := range sortedKeys(obj) {
		val := obj[name]
		key := name
		if parent.key != "" {
			key = parent.key + "." + name
		}
		if parent == g.s.root && name == "$schema" {
			continue
		}
		n, ok := parent.fields[name]
		_, isMap := val.(map[string]any)
		// An object agentry also has is entered, so that the warning names
		// the key inside it (security.auth rather than security).
		if !ok || !g.sharesBelow(key) && (n.kind != kindObject || !isMap) {
			g.unused = append(g.unused, key)
			continue
		}
		if n.kind == kindObject {
			m, ok := val.(map[string]any)
			if !ok {
				g.invalid = append(g.invalid, fmt.Sprintf("%q must be an object, got %s", key, jsonType(val)))
				continue
			}
			g.walk(n, m)
			continue
		}
		if n.kind == kindJSON {
			g.structured(n, val)
			continue
		}
		v, err := g.value(n, val)
		if err != nil {
			g.invalid = append(g.invalid, err.Error())
			continue
		}
		g.out[key] = v
	}
}

// sharesBelow reports whether key or a key below it is shared.
func (g *geminiWalk) sharesBelow(key string) bool {
	for k := range g.shared {
		if k == key || strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// value converts and checks one shared leaf, with gemini-cli's own rules
// where they are narrower than agentry's.
func (g *geminiWalk) value(n *node, val any) (any, error) {
	v, err := fromJSON(g.file, n, val)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, errors.New(strings.TrimPrefix(e.Error(), g.file+": "))
		}
		return nil, err
	}
	if exp := checkValue(n.key, v); exp != "" {
		got, _ := json.Marshal(val)
		return nil, fmt.Errorf("%q must be %s, got %s", n.key, exp, got)
	}
	// gemini-cli's settings accept default, auto_edit and plan: yolo is
	// only ever chosen on the command line there.
	if n.key == "general.defaultApprovalMode" && v == ApprovalYolo {
		return nil, fmt.Errorf("%q: yolo is not a settings value in gemini-cli (use --yolo, or set it in ~/.agentry/settings.json)", n.key)
	}
	return v, nil
}

// structured takes a map-valued key (mcpServers, hooks) entry by entry.
func (g *geminiWalk) structured(n *node, val any) {
	m, ok := val.(map[string]any)
	if !ok || n.typ.Kind() != reflect.Map {
		v, err := g.value(n, val)
		if err != nil {
			g.invalid = append(g.invalid, err.Error())
			return
		}
		g.out[n.key] = v
		return
	}
	kept := map[string]any{}
	for _, name := range sortedKeys(m) {
		raw, err := json.Marshal(map[string]any{name: m[name]})
		var v any
		if err == nil {
			v, err = decodeJSON(n, raw)
		}
		if err == nil {
			err = geminiEntryUsable(v, name)
		}
		if err != nil {
			g.invalid = append(g.invalid, fmt.Sprintf("%s.%s: %s", n.key, name, jsonProblem(err)))
			continue
		}
		kept[name] = m[name]
	}
	if len(kept) == 0 {
		return
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		return
	}
	v, err := decodeJSON(n, raw)
	if err != nil {
		g.invalid = append(g.invalid, fmt.Sprintf("%s: %s", n.key, jsonProblem(err)))
		return
	}
	g.out[n.key] = v
}

// geminiEntryUsable refuses a gemini-cli mcpServers entry agentry cannot
// run (an authProviderType it lacks), so that it is ignored with a warning
// as an unknown field is, rather than failing every session.
func geminiEntryUsable(v any, name string) error {
	servers, ok := v.(map[string]MCPServerSettings)
	if !ok {
		return nil
	}
	if sc, ok := servers[name]; ok {
		if err := sc.validateAuth(name); err != nil {
			return err
		}
	}
	return nil
}

// geminiSettingsPath returns gemini-cli's settings file in dir (a home
// directory or a workspace).
func geminiSettingsPath(dir string) string {
	return filepath.Join(dir, geminiDir, "settings.json")
}
