// Package modelid is agentry's one table of Gemini model ids and aliases
// and the one function that resolves a model name to the model to call,
// as gemini-cli's packages/core/src/config/models.ts does. Routing (chains,
// the router, fallback re-selection), the model backends' name parsing and
// the session's reported model all resolve through [Resolve], so a name
// means the same model everywhere.
//
// Names with a scheme other than "gemini:" ("openai:…", "replay:…") are
// opaque here and pass through unchanged.
package modelid

import "strings"

// Gemini model ids and aliases, as gemini-cli's config/models.ts names them.
const (
	// DefaultProModel is the stable Pro model: the target of "pro" and
	// "auto" without preview access, and the model of last resort when a
	// chain offers nothing (gemini-cli's DEFAULT_GEMINI_MODEL).
	DefaultProModel = "gemini-2.5-pro"
	// DefaultFlashModel is the stable Flash model, the last resort of the
	// default chain (DEFAULT_GEMINI_FLASH_MODEL).
	DefaultFlashModel = "gemini-2.5-flash"
	// DefaultFlashLiteModel is the model "flash-lite" resolves to and the
	// head of the flash-lite chain used for utility calls. gemini-cli's
	// DEFAULT_GEMINI_FLASH_LITE_MODEL is Gemini 3.1 Flash Lite (it went GA),
	// not gemini-2.5-flash-lite, so this equals [FlashLite31Model].
	DefaultFlashLiteModel = FlashLite31Model
	// Flash25LiteModel is the older Flash Lite model. gemini-cli still has
	// generation settings for it but no alias or chain resolves to it; it is
	// an ordinary concrete model with a single-model chain.
	Flash25LiteModel = "gemini-2.5-flash-lite"
	// PreviewProModel is Gemini 3 Pro, the head of the preview chain
	// (PREVIEW_GEMINI_MODEL).
	PreviewProModel = "gemini-3-pro-preview"
	// Preview31ProModel replaces [PreviewProModel] everywhere once Gemini
	// 3.1 Pro has launched for the user ([Access.Gemini31]).
	Preview31ProModel = "gemini-3.1-pro-preview"
	// Preview31CustomToolsModel is the 3.1 Pro variant gemini-cli uses with
	// API-key auth ([Access.CustomTools]).
	Preview31CustomToolsModel = "gemini-3.1-pro-preview-customtools"
	// PreviewFlashModel is Gemini 3 Flash, the last resort of the preview
	// chain (PREVIEW_GEMINI_FLASH_MODEL).
	PreviewFlashModel = "gemini-3-flash-preview"
	// FlashLite31Model is Gemini 3.1 Flash Lite.
	FlashLite31Model = "gemini-3.1-flash-lite"

	// AliasAuto lets the router pick Pro or Flash per request, in the
	// preview family when the user has preview access.
	AliasAuto = "auto"
	// AliasAutoGemini3 is auto routing pinned to the Gemini 3 family
	// (deprecated in gemini-cli in favour of "auto", still honoured).
	AliasAutoGemini3 = "auto-gemini-3"
	// AliasAutoGemini25 is auto routing pinned to the Gemini 2.5 family.
	AliasAutoGemini25 = "auto-gemini-2.5"
	// AliasPro is the best Pro model the user has access to.
	AliasPro = "pro"
	// AliasFlash is the preview Flash model (stable Flash without preview
	// access).
	AliasFlash = "flash"
	// AliasFlashLite is the Flash Lite model.
	AliasFlashLite = "flash-lite"

	// legacyFlashLiteModel is gemini-cli's deprecated
	// PREVIEW_GEMINI_FLASH_LITE_MODEL placeholder; resolveModel maps it to
	// the Flash Lite model, so a configured "none" still works.
	legacyFlashLiteModel = "none"
)

// Access is what the user may use, which changes what aliases resolve to.
// gemini-cli reads these from the Code Assist tier and experiment flags; the
// zero value is a user with no preview access.
type Access struct {
	// Preview reports that the user has access to preview (Gemini 3)
	// models. Without it every preview model and alias is downgraded to its
	// Gemini 2.5 counterpart.
	Preview bool
	// Gemini31 reports that Gemini 3.1 Pro has launched for the user, which
	// makes "auto", "pro", "auto-gemini-3" and even an explicit
	// "gemini-3-pro-preview" resolve to 3.1 Pro.
	Gemini31 bool
	// CustomTools selects the "-customtools" variant of 3.1 Pro, which
	// gemini-cli uses for API-key auth. It has no effect without Gemini31.
	CustomTools bool
}

// Normalize returns the id availability and chains compare models
// by. The API reports models as "models/<id>" and the runtime accepts
// "gemini:<id>", but both name the same model as "<id>"; a quota marked
// against one spelling must block the others. Surrounding spaces are
// trimmed because names come from flags, settings and environment
// variables.
func Normalize(id string) string {
	id = strings.TrimSpace(id)
	id = strings.TrimPrefix(id, "gemini:")
	return strings.TrimPrefix(id, "models/")
}

// IsAuto reports whether name asks the router to pick the model
// ("auto", "auto-gemini-3" or "auto-gemini-2.5"), as gemini-cli's
// isAutoModel does. Such a name must never be sent to an API.
func IsAuto(name string) bool {
	switch Normalize(name) {
	case AliasAuto, AliasAutoGemini3, AliasAutoGemini25:
		return true
	}
	return false
}

// IsAlias reports whether name is one of gemini-cli's aliases ("auto",
// "auto-gemini-3", "auto-gemini-2.5", "pro", "flash", "flash-lite"),
// which [Resolve] maps to a concrete model.
func IsAlias(name string) bool {
	switch Normalize(name) {
	case AliasAuto, AliasAutoGemini3, AliasAutoGemini25, AliasPro, AliasFlash, AliasFlashLite:
		return true
	}
	return false
}

// IsGemini3 reports whether name is in the Gemini 3 family, as gemini-cli's
// isGemini3Model does: the name is first resolved as if the user had
// preview access (and 3.1 had not launched), so "auto", "auto-gemini-3",
// "pro", "flash" and "flash-lite" all count, while "auto-gemini-2.5" does
// not. This is the family the user asked for, independent of whether they
// may use it, which is why the catalog can proactively downgrade.
func IsGemini3(name string) bool {
	r := Resolve(name, Access{Preview: true})
	const p = "gemini-3"
	if !strings.HasPrefix(r, p) {
		return false
	}
	return len(r) == len(p) || r[len(p)] == '.' || r[len(p)] == '-'
}

// IsFlashLite reports whether name resolves to the Flash Lite model that
// gets gemini-cli's flash-lite chain. Only gemini-3.1-flash-lite (and its
// aliases) qualifies: gemini-cli compares the resolved name with
// DEFAULT_GEMINI_FLASH_LITE_MODEL, so gemini-2.5-flash-lite is an ordinary
// model there and here.
func IsFlashLite(name string) bool {
	return Resolve(name, Access{}) == DefaultFlashLiteModel
}

// Resolve maps a model name to the concrete id to call, as gemini-cli's
// resolveModel does: "auto" and "pro" become the family's Pro model,
// "auto-gemini-3" the preview Pro, "auto-gemini-2.5" gemini-2.5-pro, "flash"
// the preview Flash and "flash-lite" the Flash Lite model. Gemini 3 Pro is
// replaced by 3.1 Pro once it has launched, and without preview access
// every preview model is downgraded to its stable counterpart, so a
// preview id configured by a user who lost access still works. Other names
// are returned normalized ([Normalize]); names with another scheme
// ("openai:…", "replay:…") come back unchanged.
func Resolve(name string, acc Access) string {
	n := Normalize(name)
	var r string
	switch n {
	case AliasAuto, AliasPro:
		if !acc.Preview {
			r = DefaultProModel
			break
		}
		r = PreviewPro(acc)
	case PreviewProModel, AliasAutoGemini3:
		r = PreviewPro(acc)
	case AliasAutoGemini25:
		r = DefaultProModel
	case AliasFlash:
		r = PreviewFlashModel
	case AliasFlashLite:
		r = DefaultFlashLiteModel
	default:
		r = n
	}
	if r == legacyFlashLiteModel {
		return DefaultFlashLiteModel
	}
	if !acc.Preview && isPreviewModel(r) {
		return downgrade(r)
	}
	return r
}

// PreviewPro is the Pro model of the preview family for acc: Gemini 3 Pro,
// or 3.1 Pro (or its custom-tools variant) once it has launched. It ignores
// acc.Preview; the policy chains use it to name the preview family.
func PreviewPro(acc Access) string {
	switch {
	case acc.Gemini31 && acc.CustomTools:
		return Preview31CustomToolsModel
	case acc.Gemini31:
		return Preview31ProModel
	}
	return PreviewProModel
}

// isPreviewModel is gemini-cli's isPreviewModel: the models (and aliases)
// that need preview access.
func isPreviewModel(m string) bool {
	switch m {
	case PreviewProModel, Preview31ProModel, Preview31CustomToolsModel,
		PreviewFlashModel, AliasAutoGemini3, AliasAuto:
		return true
	}
	return false
}

// downgrade maps a preview model to the stable model a user without
// preview access gets instead.
func downgrade(m string) string {
	switch m {
	case PreviewFlashModel:
		return DefaultFlashModel
	case PreviewProModel, Preview31ProModel, Preview31CustomToolsModel:
		return DefaultProModel
	}
	// gemini-cli's catch-all for preview models it has no mapping for.
	switch {
	case strings.Contains(m, "flash-lite"):
		return DefaultFlashLiteModel
	case strings.Contains(m, "flash"):
		return DefaultFlashModel
	}
	return DefaultProModel
}

// ResolveClassifierChoice returns the concrete model a classifier's
// "flash" or "pro" verdict means for the requested model, as gemini-cli's
// resolveClassifierModel does. "flash" stays in the requested family:
// gemini-2.5-flash for "auto-gemini-2.5" and gemini-2.5-pro, otherwise the
// preview Flash (stable Flash without preview access). Note that gemini-cli
// sends every other requested model, even a 2.5 one such as
// gemini-2.5-flash, to the preview Flash. Any other choice ("pro") resolves
// the requested model itself with [Resolve], which is the family's Pro
// model for the auto aliases.
func ResolveClassifierChoice(requested, choice string, acc Access) string {
	req := Normalize(requested)
	if choice != AliasFlash {
		return Resolve(req, acc)
	}
	switch req {
	case AliasAutoGemini25, DefaultProModel:
		return DefaultFlashModel
	}
	// Both the Gemini 3 requests (auto-gemini-3, gemini-3-pro-preview,
	// auto) and everything else resolve "flash" the same way.
	return Resolve(AliasFlash, Access{Preview: acc.Preview})
}
