package runtime

import "github.com/agentry-dev/agentry/plugins/loopguard"

// LoopConfig turns loop detection on (Config.LoopDetection; nil is off).
type LoopConfig = loopguard.Config

// loopDetectedMessage is gemini-cli's text for a stopped loop, in the
// error event and in stream-json's warning.
const loopDetectedMessage = "Loop detected, stopping execution"
