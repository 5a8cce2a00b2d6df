package config

import (
	"path/filepath"
	"strings"
)

// checkValue applies the range checks that the type alone cannot express.
// It returns what the value must be, or "" when the value is fine. v has
// the Go type of the key (string, int, bool or []string).
func checkValue(key string, v any) string {
	switch key {
	case "model.name":
		if v.(string) == "" {
			return "a non-empty string"
		}
	case "general.defaultApprovalMode":
		if ApprovalRank(v.(string)) < 0 {
			return "one of plan, default, auto_edit, yolo"
		}
	case "output.format":
		switch v.(string) {
		case "text", "json", "stream-json", "events":
		default:
			return "one of text, json, stream-json, events"
		}
	case "model.maxSessionTurns":
		if v.(int) < -1 {
			return "an integer >= -1 (-1 means unlimited)"
		}
	case "session.store":
		switch v.(string) {
		case SessionStoreSQLite, SessionStorePostgres, SessionStoreMemory:
		default:
			return "one of sqlite, postgres, memory"
		}
	case "general.maxAttempts":
		if n := v.(int); n < 1 || n > 10 {
			return "an integer from 1 to 10"
		}
	case "model.routing.numericalThreshold":
		if n := v.(int); n < 0 || n > 100 {
			return "an integer from 0 to 100 (0 means the default, 90)"
		}
	case "model.compressionThreshold":
		if f := v.(float64); f <= 0 {
			return "a number above 0 (a fraction of the context window, such as 0.5; above 1 turns automatic compression off)"
		}
	case "model.loopDetection.toolCallThreshold", "model.loopDetection.contentThreshold":
		if v.(int) < 2 {
			return "an integer >= 2"
		}
	case "model.loopDetection.llmCheckAfterTurns":
		if v.(int) < 0 {
			return "an integer >= 0 (0 never asks the model)"
		}
	case "telemetry.otlpProtocol":
		switch v.(string) {
		case "grpc", "http":
		default:
			return "one of grpc, http"
		}
	case "a2a.live.idleMinutes":
		if v.(int) < 1 {
			return "an integer >= 1 (minutes a task on a live stream may wait for an answer before it is cancelled; default 10): a task must not wait for ever"
		}
	case "tools.shell.timeoutSeconds", "context.maxDirectoryItems":
		if v.(int) < 0 {
			return "an integer >= 0"
		}
	case "security.trustedFolders":
		// A relative trusted folder would depend on the directory agentry
		// happens to start in, which is exactly what trust must not do.
		for _, p := range v.([]string) {
			if !filepath.IsAbs(p) && p != "~" && !strings.HasPrefix(p, "~/") {
				return "a list of absolute paths (or paths starting with ~/)"
			}
		}
	}
	return ""
}

// ApprovalRank orders the approval modes by permissiveness: plan 0,
// default 1, auto_edit 2, yolo 3. It returns -1 for an unknown mode.
func ApprovalRank(mode string) int {
	switch mode {
	case ApprovalPlan:
		return 0
	case ApprovalDefault:
		return 1
	case ApprovalAutoEdit:
		return 2
	case ApprovalYolo:
		return 3
	}
	return -1
}
