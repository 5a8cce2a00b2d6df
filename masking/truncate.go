package masking

import "path/filepath"

// DefaultTruncateThreshold is gemini-cli's
// DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD, in characters.
const DefaultTruncateThreshold = 40_000

// TruncateOutput is gemini-cli's per-call truncation (tool-executor.ts,
// fileUtils.ts): text longer than threshold characters (UTF-16 code units)
// is written whole to spillPath, creating its directory, and replaced by FormatTruncated's message. Shorter text, or a threshold of 0
// or less, returns text unchanged and writes nothing.
func TruncateOutput(text string, threshold int, spillPath string) (string, error) {
	if threshold <= 0 || utf16AtMost(text, threshold) {
		return text, nil
	}
	if err := mkdirSpill(filepath.Dir(spillPath)); err != nil {
		return "", err
	}
	if err := writeSpill(spillPath, []byte(text)); err != nil {
		return "", err
	}
	return FormatTruncated(text, spillPath, threshold), nil
}

// FormatTruncated is gemini-cli's formatTruncatedToolOutput: the first 20 %
// and the last 80 % of maxChars characters of text, under a header that
// names the file with the full output. Text of at most maxChars
// characters is returned unchanged.
func FormatTruncated(text, outputFile string, maxChars int) string {
	total := utf16Len(text)
	if total <= maxChars {
		return text
	}
	head := maxChars / 5 // Math.floor(maxChars * 0.2)
	tail := maxChars - head
	return "Output too large. Showing first " + formatThousands(head) + " and last " + formatThousands(tail) +
		" characters. For full output see: " + outputFile + "\n" +
		utf16Head(text, head) + "\n\n... [" + formatThousands(total-head-tail) + " characters omitted] ...\n\n" +
		utf16Tail(text, tail)
}
