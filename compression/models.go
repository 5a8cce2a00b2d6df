package compression

import "github.com/agentry-dev/agentry/modelid"

// Context windows from gemini-cli's tokenLimits.ts.
const (
	// DefaultTokenLimit is gemini-cli's DEFAULT_TOKEN_LIMIT, which also
	// applies to every model its table does not name.
	DefaultTokenLimit = 1_048_576
	// Gemma4TokenLimit is gemini-cli's GEMMA_4_TOKEN_LIMIT.
	Gemma4TokenLimit = 256_000
)

// TokenLimit is gemini-cli's tokenLimit: the context window of model, in
// tokens, with agentry's "gemini:" and "models/" prefixes ignored. Only the Gemma 4 models differ from the default; the Gemini models
// it names (gemini-3-pro-preview, gemini-3-flash-preview, gemini-2.5-pro,
// gemini-2.5-flash, gemini-3.1-flash-lite) share it, as does everything else.
func TokenLimit(model string) int {
	switch modelid.Normalize(model) {
	case "gemma-4-31b-it", "gemma-4-26b-a4b-it":
		return Gemma4TokenLimit
	default:
		return DefaultTokenLimit
	}
}

// DefaultUtilityModel is the model gemini-cli summarises a chat on model
// with (agentry's "gemini:" and "models/" prefixes ignored): modelStringToModelConfigAlias picks a chat-compression-* alias and
// defaultModelConfigs.ts gives each alias a concrete model:
//
//	gemini-3-pro-preview, gemini-3.1-pro-preview → gemini-3-pro-preview
//	gemini-3-flash-preview                       → gemini-3-flash-preview
//	gemini-3.1-flash-lite                        → gemini-3.1-flash-lite
//	gemini-2.5-pro                               → gemini-2.5-pro
//	gemini-2.5-flash                             → gemini-2.5-flash
//	gemini-2.5-flash-lite                        → gemini-2.5-flash-lite
//	anything else (chat-compression-default)     → gemini-3-pro-preview
//
// gemini-cli's flash constants are switched at run time by its Gemini 3.5
// Flash rollout (setFlashModels); this table uses their defaults. Its
// "none" case (the retired PREVIEW_GEMINI_FLASH_LITE_MODEL sentinel) is not
// a model id and is left to the default.
func DefaultUtilityModel(model string) string {
	switch modelid.Normalize(model) {
	case "gemini-3-pro-preview", "gemini-3.1-pro-preview":
		return "gemini-3-pro-preview"
	case "gemini-3-flash-preview":
		return "gemini-3-flash-preview"
	case "gemini-3.1-flash-lite":
		return "gemini-3.1-flash-lite"
	case "gemini-2.5-flash-lite":
		return "gemini-2.5-flash-lite"
	case "gemini-2.5-pro":
		return "gemini-2.5-pro"
	case "gemini-2.5-flash":
		return "gemini-2.5-flash"
	default:
		return "gemini-3-pro-preview"
	}
}
