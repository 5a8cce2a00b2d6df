package compression

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
)

// FunctionResponseBudget is gemini-cli's
// COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET: the estimated tokens of
// function responses, newest first, kept whole when compressing.
const FunctionResponseBudget = 50_000

// truncator applies gemini-cli's truncateHistoryToBudget.
type truncator struct {
	tempDir  string
	maxChars int
	log      *slog.Logger
}

// truncate returns history with every function response past the budget
// (counting from the newest, parts in reverse order) replaced by gemini-cli's
// truncated-output message, its full text spilled to a file. Every content is
// a new value; unchanged parts are shared with history, which is never
// modified. A response whose spill fails is kept whole, as gemini-cli keeps
// it, so a full disk costs context but never data.
func (t truncator) truncate(ctx context.Context, history []*genai.Content) []*genai.Content {
	used := 0
	out := make([]*genai.Content, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		c := history[i]
		if c == nil {
			continue
		}
		var parts []*genai.Part
		if c.Parts != nil {
			parts = make([]*genai.Part, len(c.Parts))
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			p := c.Parts[j]
			parts[j] = p
			if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Response == nil {
				// A nil response makes gemini-cli's spill throw; it keeps
				// the part and counts it as nothing.
				continue
			}
			text := functionResponseText(p.FunctionResponse.Response)
			tokens := masking.EstimateTokens([]*genai.Part{{Text: text}})
			if used+tokens <= FunctionResponseBudget {
				used += tokens
				continue
			}
			msg, err := t.spill(text, p.FunctionResponse.Name)
			if err != nil {
				t.log.DebugContext(ctx, "compression: keeping a function response whole, its spill failed",
					"tool", p.FunctionResponse.Name, "error", err)
				used += tokens
				continue
			}
			fr := *p.FunctionResponse
			fr.Response = map[string]any{"output": msg}
			// Like gemini-cli, the new part carries only the response.
			parts[j] = &genai.Part{FunctionResponse: &fr}
			used += masking.EstimateTokens([]*genai.Part{{Text: msg}})
		}
		nc := *c
		nc.Parts = parts
		out[i] = &nc
	}
	return out
}

// functionResponseText is the text gemini-cli truncates: the response's string
// "output", else its string "content", else the response as two-space
// indented JSON (Go sorts its keys; JavaScript keeps their order).
func functionResponseText(resp map[string]any) string {
	if s, ok := resp["output"].(string); ok {
		return s
	}
	if s, ok := resp["content"].(string); ok {
		return s
	}
	return masking.PrettyJSON(resp)
}

// spill saves text under tempDir/tool-outputs and returns the truncated
// message pointing at it.
//
// gemini-cli names the file <tool>_<n>.txt with a per-session counter. A
// counter would need state that outlives one Compress call, and restarting
// it would overwrite files earlier messages point at, so the id here is a
// hash of the content, <tool>_compression_<hash>.txt: the same output
// always lands in the same file and different outputs never share one. The
// name is built by masking.SpillPath, which sanitises and caps it as the
// per-call truncation's names are.
func (t truncator) spill(text, tool string) (string, error) {
	sum := sha256.Sum256([]byte(text))
	dir := filepath.Join(t.tempDir, masking.ToolOutputsDir)
	path, err := masking.SpillPath(dir, tool, "compression_"+hex.EncodeToString(sum[:8]))
	if err != nil {
		return "", fmt.Errorf("compression: %w", err)
	}
	// Tool output can hold secrets: keep it private to the user.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("compression: create %s: %w", dir, err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("compression: write %s: %w", path, err)
	}
	return masking.FormatTruncated(text, path, t.maxChars), nil
}
