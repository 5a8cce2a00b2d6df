// Package compression is gemini-cli's chat compression
// (packages/core/src/context/chatCompressionService.ts) over a plain
// history: when the last prompt nears the model's context window, the older
// 70 % of the history is distilled by a utility model into a
// <state_snapshot>, checked once by a verification ("probe") turn, and
// replaced by that snapshot, an acknowledgement and the kept 30 %.
//
// The package is the pure core: it reads a history and returns a new one.
// Rewriting the live session, firing the PreCompress hook and emitting the
// compression event belong to its caller.
package compression

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/masking"
	"github.com/agentry-dev/agentry/modelcall"
)

const (
	// DefaultThreshold is gemini-cli's DEFAULT_COMPRESSION_TOKEN_THRESHOLD:
	// compress once the last prompt used this fraction of the window.
	DefaultThreshold = 0.5
	// PreserveFraction is gemini-cli's COMPRESSION_PRESERVE_THRESHOLD: the
	// newest fraction of the history (by JSON length) kept verbatim.
	PreserveFraction = 0.3
)

// Caller makes one non-streaming utility-model call: a
// [modelcall.Caller], which agentry's dispatcher provides with its retry
// loop. It must not modify req.Contents, which share values with the
// history being compressed.
type Caller = modelcall.Caller

// Status is the outcome of a compression attempt: gemini-cli's
// CompressionStatus, spelled as its enum member names.
type Status string

// Statuses, in gemini-cli's enum order (see Code).
const (
	// StatusCompressed means the history was summarised; newHistory holds
	// the summary, the acknowledgement and the kept tail.
	StatusCompressed Status = "COMPRESSED"
	// StatusFailedInflatedTokenCount means the summarised history would be
	// larger than the original; it is discarded. The caller should then
	// pass failedBefore on later automatic attempts, as gemini-cli's
	// hasFailedCompressionAttempt does (only when the attempt was not forced).
	StatusFailedInflatedTokenCount Status = "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"
	// StatusFailedTokenCountError is part of gemini-cli's set but no longer
	// produced by it, nor here: a failed count falls back to the estimate.
	StatusFailedTokenCountError Status = "COMPRESSION_FAILED_TOKEN_COUNT_ERROR"
	// StatusFailedEmptySummary means the utility model returned no text.
	StatusFailedEmptySummary Status = "COMPRESSION_FAILED_EMPTY_SUMMARY"
	// StatusNoop means nothing was needed or possible; the history stands.
	StatusNoop Status = "NOOP"
	// StatusContentTruncated means summarisation was skipped after an
	// earlier failure, but truncating old function responses shrank the
	// history; newHistory holds the truncated history.
	StatusContentTruncated Status = "CONTENT_TRUNCATED"
)

// Code returns gemini-cli's numeric CompressionStatus (COMPRESSED = 1 …
// CONTENT_TRUNCATED = 6), which its JSON events carry; 0 for an unknown
// status.
func (s Status) Code() int {
	switch s {
	case StatusCompressed:
		return 1
	case StatusFailedInflatedTokenCount:
		return 2
	case StatusFailedTokenCountError:
		return 3
	case StatusFailedEmptySummary:
		return 4
	case StatusNoop:
		return 5
	case StatusContentTruncated:
		return 6
	}
	return 0
}

// Info is gemini-cli's ChatCompressionInfo.
type Info struct {
	// OriginalTokens is the last prompt's token count.
	OriginalTokens int
	// NewTokens is the count of the new history (OriginalTokens when
	// nothing changed).
	NewTokens int
	// Status is the outcome.
	Status Status
}

// Config configures Compress.
type Config struct {
	// Model is the chat model whose context window applies.
	Model string
	// UtilityModel summarises; "" is DefaultUtilityModel(Model).
	UtilityModel string
	// Threshold is the fraction of the window at which automatic
	// compression starts; 0 is DefaultThreshold. Values above 1 are allowed
	// (compression then only happens when forced).
	Threshold float64
	// Caller makes the utility-model calls. Required.
	Caller Caller
	// TempDir is the project temp directory; truncated function responses
	// are spilled to its tool-outputs directory
	// (masking.ToolOutputsDir). Required.
	TempDir string
	// TokenLimit returns a model's context window; nil is TokenLimit.
	TokenLimit func(model string) int
	// CountTokens counts the new history when it holds media (inline data
	// or file data), as gemini-cli's calculateRequestTokenCount calls the
	// countTokens API only then; text is always estimated. nil, or an
	// error, falls back to the estimate.
	CountTokens func(ctx context.Context, contents []*genai.Content) (int, error)

	// ApprovedPlanPath adds gemini-cli's approved-plan section to the
	// compression prompt (Gemini 3 and non-Gemini models only; see Prompt).
	ApprovedPlanPath string
	// TruncateThreshold is the configured tool-output truncation threshold
	// in characters; 0 is masking.DefaultTruncateThreshold (40,000). As in gemini-cli, the
	// threshold used is the smaller of it and four characters per token
	// left in the window.
	TruncateThreshold int
	// Logger receives diagnostics; nil is slog.Default().
	Logger *slog.Logger
}

// Compress is gemini-cli's ChatCompressionService.compress over history
// (oldest first) whose last prompt used lastPromptTokens tokens. force
// ignores the threshold (a manual /compress); failedBefore is gemini-cli's
// hasFailedCompressionAttempt and, unless forced, limits the attempt to
// truncating old function responses.
//
// It never modifies history. newHistory is nil unless the status is
// StatusCompressed or StatusContentTruncated; it is made of new contents
// but shares unchanged parts with history. A Caller error is returned with
// a nil newHistory, so a failed compression leaves the session unchanged.
func Compress(ctx context.Context, cfg Config, history []*genai.Content, lastPromptTokens int, force, failedBefore bool) (newHistory []*genai.Content, info Info, err error) {
	if err := cfg.validate(); err != nil {
		return nil, Info{}, err
	}
	// Regardless of force, an empty history has nothing to compress.
	if len(history) == 0 {
		return nil, Info{Status: StatusNoop}, nil
	}
	limitOf := cfg.TokenLimit
	if limitOf == nil {
		limitOf = TokenLimit
	}
	limit := limitOf(cfg.Model)
	original := lastPromptTokens
	unchanged := Info{OriginalTokens: original, NewTokens: original, Status: StatusNoop}

	if !force {
		threshold := cfg.Threshold
		if threshold == 0 {
			threshold = DefaultThreshold
		}
		if float64(original) < threshold*float64(limit) {
			return nil, unchanged, nil
		}
	}

	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	// Truncate the whole history first, so that even the part to be
	// summarised fits the summariser.
	truncated := truncator{tempDir: cfg.TempDir, maxChars: cfg.truncateChars(limit, original), log: log}.truncate(ctx, history)

	// After a failed summary, automatic attempts only truncate: asking the
	// model again would likely fail again, at a cost. As in gemini-cli the
	// estimate is compared with the API's count of the last prompt, so the
	// truncated history is returned whenever it estimates lower, even if no
	// response needed truncating.
	if failedBefore && !force {
		if n := masking.EstimateTokens(allParts(truncated)); n < original {
			return truncated, Info{OriginalTokens: original, NewTokens: n, Status: StatusContentTruncated}, nil
		}
		return nil, unchanged, nil
	}

	split, err := SplitPoint(truncated, 1-PreserveFraction)
	if err != nil {
		return nil, unchanged, err
	}
	if split == 0 {
		return nil, unchanged, nil
	}
	keep := truncated[split:]

	// Summarise from the original, untruncated history when it fits the
	// window: the summary is then faithful to what the tools returned.
	toSummarise := history[:split]
	if masking.EstimateTokens(allParts(toSummarise)) >= limit {
		toSummarise = truncated[:split]
	}

	utility := cfg.UtilityModel
	if utility == "" {
		utility = DefaultUtilityModel(cfg.Model)
	}
	prompt := Prompt(cfg.Model, cfg.ApprovedPlanPath)

	summaryResp, err := cfg.Caller(ctx, request(utility, prompt, toSummarise,
		genai.NewContentFromText(anchor(hasSnapshot(toSummarise)), genai.RoleUser)))
	if err != nil {
		return nil, unchanged, fmt.Errorf("compression: summarise: %w", err)
	}
	summary := responseText(summaryResp)

	// The probe: a second look at the same history lets the model restore
	// details its first snapshot dropped.
	verifyResp, err := cfg.Caller(ctx, request(utility, prompt, toSummarise,
		genai.NewContentFromText(summary, genai.RoleModel),
		genai.NewContentFromText(verifyPrompt, genai.RoleUser)))
	if err != nil {
		return nil, unchanged, fmt.Errorf("compression: verify summary: %w", err)
	}
	final := masking.TrimJS(responseText(verifyResp))
	if final == "" {
		final = masking.TrimJS(summary)
	}
	if final == "" {
		return nil, Info{OriginalTokens: original, NewTokens: original, Status: StatusFailedEmptySummary}, nil
	}

	out := make([]*genai.Content, 0, len(keep)+2)
	out = append(out,
		genai.NewContentFromText(final, genai.RoleUser),
		genai.NewContentFromText(Ack, genai.RoleModel))
	out = append(out, keep...)

	n := cfg.count(ctx, log, out)
	log.DebugContext(ctx, "compression: summarised history", "tokens_before", original, "tokens_after", n)
	if n > original {
		return nil, Info{OriginalTokens: original, NewTokens: n, Status: StatusFailedInflatedTokenCount}, nil
	}
	return out, Info{OriginalTokens: original, NewTokens: n, Status: StatusCompressed}, nil
}

// validate reports a Config Compress cannot run with.
func (cfg Config) validate() error {
	switch {
	case cfg.Caller == nil:
		return errors.New("compression: Config.Caller is required")
	case cfg.TempDir == "":
		return errors.New("compression: Config.TempDir is required")
	case cfg.Threshold < 0 || math.IsNaN(cfg.Threshold):
		return fmt.Errorf("compression: Config.Threshold %v is not a fraction of the window", cfg.Threshold)
	case cfg.TruncateThreshold < 0:
		return fmt.Errorf("compression: Config.TruncateThreshold %d is negative", cfg.TruncateThreshold)
	}
	return nil
}

// truncateChars is gemini-cli's getTruncateToolOutputThreshold: the
// configured threshold, capped at four characters per token left in the
// window. gemini-cli lets the cap go to zero or below once the window is
// full, where its slicing keeps the whole output; it stops at zero here, so
// such a response shrinks to the message and the file path.
func (cfg Config) truncateChars(limit, lastPromptTokens int) int {
	configured := cfg.TruncateThreshold
	if configured == 0 {
		configured = masking.DefaultTruncateThreshold
	}
	return max(0, min(4*(limit-lastPromptTokens), configured))
}

// count is gemini-cli's calculateRequestTokenCount over the new history's
// parts: the CountTokens API for media, the estimate otherwise or when the
// count fails. gemini-cli also counts the environment-context turn it puts
// back in front of the new history; agentry keeps no such turn in the
// history, so there is none to count.
func (cfg Config) count(ctx context.Context, log *slog.Logger, contents []*genai.Content) int {
	parts := allParts(contents)
	if cfg.CountTokens != nil && hasMedia(parts) {
		// gemini-cli sends all parts as one user content.
		n, err := cfg.CountTokens(ctx, []*genai.Content{{Role: genai.RoleUser, Parts: parts}})
		if err == nil {
			return n
		}
		log.DebugContext(ctx, "compression: counting tokens failed, estimating", "error", err)
	}
	return masking.EstimateTokens(parts)
}

// request builds a utility-model request over history followed by turns,
// in a slice of its own. The compression aliases in gemini-cli's model
// configs carry no generation settings, so neither does the request: only
// the system instruction.
func request(utility, prompt string, history []*genai.Content, turns ...*genai.Content) *model.LLMRequest {
	contents := make([]*genai.Content, 0, len(history)+len(turns))
	contents = append(append(contents, history...), turns...)
	return &model.LLMRequest{
		Model:    utility,
		Contents: contents,
		Config: &genai.GenerateContentConfig{
			// The JavaScript SDK turns a bare part into a user content.
			SystemInstruction: genai.NewContentFromText(prompt, genai.RoleUser),
		},
	}
}

// responseText is gemini-cli's getResponseText: the response's non-thought
// text parts joined, "" when there are none.
func responseText(resp *model.LLMResponse) string {
	if resp == nil || resp.Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range resp.Content.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// hasSnapshot reports whether any text in contents holds a previous
// <state_snapshot>.
func hasSnapshot(contents []*genai.Content) bool {
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && strings.Contains(p.Text, snapshotTag) {
				return true
			}
		}
	}
	return false
}

// allParts flattens the parts of contents.
func allParts(contents []*genai.Content) []*genai.Part {
	var parts []*genai.Part
	for _, c := range contents {
		if c != nil {
			parts = append(parts, c.Parts...)
		}
	}
	return parts
}

// hasMedia reports whether parts hold inline or file data.
func hasMedia(parts []*genai.Part) bool {
	for _, p := range parts {
		if p != nil && (p.InlineData != nil || p.FileData != nil) {
			return true
		}
	}
	return false
}
