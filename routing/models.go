package routing

import "github.com/agentry-dev/agentry/modelid"

// Gemini model ids and aliases. They are modelid's: routing, the model
// backends and the session share that one table.
const (
	// DefaultProModel is [modelid.DefaultProModel].
	DefaultProModel = modelid.DefaultProModel
	// DefaultFlashModel is [modelid.DefaultFlashModel].
	DefaultFlashModel = modelid.DefaultFlashModel
	// DefaultFlashLiteModel is [modelid.DefaultFlashLiteModel].
	DefaultFlashLiteModel = modelid.DefaultFlashLiteModel
	// Flash25LiteModel is [modelid.Flash25LiteModel].
	Flash25LiteModel = modelid.Flash25LiteModel
	// PreviewProModel is [modelid.PreviewProModel].
	PreviewProModel = modelid.PreviewProModel
	// Preview31ProModel is [modelid.Preview31ProModel].
	Preview31ProModel = modelid.Preview31ProModel
	// Preview31CustomToolsModel is [modelid.Preview31CustomToolsModel].
	Preview31CustomToolsModel = modelid.Preview31CustomToolsModel
	// PreviewFlashModel is [modelid.PreviewFlashModel].
	PreviewFlashModel = modelid.PreviewFlashModel
	// FlashLite31Model is [modelid.FlashLite31Model].
	FlashLite31Model = modelid.FlashLite31Model

	// AliasAuto is [modelid.AliasAuto].
	AliasAuto = modelid.AliasAuto
	// AliasAutoGemini3 is [modelid.AliasAutoGemini3].
	AliasAutoGemini3 = modelid.AliasAutoGemini3
	// AliasAutoGemini25 is [modelid.AliasAutoGemini25].
	AliasAutoGemini25 = modelid.AliasAutoGemini25
	// AliasPro is [modelid.AliasPro].
	AliasPro = modelid.AliasPro
	// AliasFlash is [modelid.AliasFlash].
	AliasFlash = modelid.AliasFlash
	// AliasFlashLite is [modelid.AliasFlashLite].
	AliasFlashLite = modelid.AliasFlashLite
)

// Access is what the user may use, which changes what aliases resolve to;
// see [modelid.Access].
type Access = modelid.Access

// NormalizeModelID is [modelid.Normalize].
func NormalizeModelID(id string) string { return modelid.Normalize(id) }

// IsAutoAlias is [modelid.IsAuto].
func IsAutoAlias(name string) bool { return modelid.IsAuto(name) }

// IsGemini3 is [modelid.IsGemini3].
func IsGemini3(name string) bool { return modelid.IsGemini3(name) }

// IsFlashLite is [modelid.IsFlashLite].
func IsFlashLite(name string) bool { return modelid.IsFlashLite(name) }

// ResolveModel is [modelid.Resolve], the one alias resolution.
func ResolveModel(name string, acc Access) string { return modelid.Resolve(name, acc) }

// ResolveClassifierChoice is [modelid.ResolveClassifierChoice].
func ResolveClassifierChoice(requested, choice string, acc Access) string {
	return modelid.ResolveClassifierChoice(requested, choice, acc)
}
