package compression

import (
	"fmt"
	"strings"

	"github.com/agentry-dev/agentry/modelid"
)

// The fixed turns gemini-cli's ChatCompressionService adds around the
// summariser's input and to the rewritten history. They are model-facing
// text, so they match gemini-cli byte for byte.
const (
	// anchorNew asks for a first snapshot.
	anchorNew = "Generate a new <state_snapshot> based on the provided history."
	// anchorIntegrate replaces anchorNew when the history being summarised
	// already holds a snapshot from an earlier compression, so that what
	// that snapshot established is carried forward instead of dropped.
	anchorIntegrate = "A previous <state_snapshot> exists in the history. You MUST integrate all still-relevant information from that snapshot into the new one, updating it with the more recent events. Do not lose established constraints or critical knowledge."
	// anchorSuffix follows either anchor in the same text part.
	anchorSuffix = "\n\nFirst, reason in your scratchpad. Then, generate the updated <state_snapshot>."
	// verifyPrompt is the "probe" turn: a second pass over the same history
	// that lets the model repair omissions in its first snapshot.
	verifyPrompt = "Critically evaluate the <state_snapshot> you just generated. Did you omit any specific technical details, file paths, tool results, or user constraints mentioned in the history? If anything is missing or could be more precise, generate a FINAL, improved <state_snapshot>. Otherwise, repeat the exact same <state_snapshot> again."
	// snapshotTag marks a previous summary in the history.
	snapshotTag = "<state_snapshot>"
)

// Ack is the model turn that follows the summary in a compressed history;
// it keeps the history alternating user/model before the kept tail.
const Ack = "Got it. Thanks for the additional context!"

// Prompt returns gemini-cli's compression system prompt for a chat on model.
// approvedPlanPath, when set, adds the approved-plan section, but only for
// models that get gemini-cli's modern prompts: its legacy prompt (Gemini 2.x
// and other Gemini models before 3) has no such section.
func Prompt(model, approvedPlanPath string) string {
	if approvedPlanPath == "" || !modernModel(model) {
		return promptHead + promptTail
	}
	return promptHead + fmt.Sprintf(promptPlan, approvedPlanPath) + promptTail
}

// modernModel is gemini-cli's supportsModernFeatures without resolveModel:
// Gemini 3 models and every non-Gemini ("custom") model. Config.Model is a
// concrete model id here, so aliases such as "auto" or "pro" are not
// resolved first; pass the resolved model.
func modernModel(model string) bool {
	model = modelid.Normalize(model)
	return isGemini3(model) || !strings.HasPrefix(model, "gemini-")
}

// isGemini3 is isGemini3Model's /^gemini-3(\.|-|$)/ from gemini-cli's
// models.ts, without a package-level regexp.
func isGemini3(model string) bool {
	rest, ok := strings.CutPrefix(model, "gemini-3")
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '-')
}

// anchor returns the user turn appended after the history sent to the
// summariser.
func anchor(hasPreviousSnapshot bool) string {
	if hasPreviousSnapshot {
		return anchorIntegrate + anchorSuffix
	}
	return anchorNew + anchorSuffix
}
