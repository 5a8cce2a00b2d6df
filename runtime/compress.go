package runtime

import "github.com/agentry-dev/agentry/plugins/compress"

// CustomChatCompressed is the custom event kind emitted when the history
// was summarised (see compress.CustomChatCompressed).
const CustomChatCompressed = compress.CustomChatCompressed

// PreCompressTrigger says why a compression was attempted: gemini-cli's
// PreCompressTrigger values.
const (
	PreCompressAuto   = compress.PreCompressAuto
	PreCompressManual = compress.PreCompressManual
)

// CompressionConfig turns on chat compression for a session built by New.
type CompressionConfig = compress.Config
