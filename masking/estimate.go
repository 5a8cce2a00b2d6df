package masking

import (
	"reflect"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Token estimation is gemini-cli's estimateTokenCountSync
// (utils/tokenCalculation.ts) with its default of four characters a token.
// Its weights — 1/4 token an ASCII code unit, 1.5 a non-ASCII one — are
// exact binary fractions, so JavaScript's floating-point sum is exact and
// the estimate is computed here in integer quarter tokens, floored once at
// the end as gemini-cli floors.
const (
	// maxCharsForFullHeuristic: longer text is simply length/4.
	maxCharsForFullHeuristic = 100_000
	// imageTokens and pdfTokens are gemini-cli's fixed media estimates.
	imageTokens = 3000
	pdfTokens   = 25800
	// nonASCIIQuarters is 1.5 tokens in quarter tokens.
	nonASCIIQuarters = 6
)

// EstimateTokens returns gemini-cli's heuristic token count of parts:
// text at 1/4 token an ASCII character and 1.5 a non-ASCII one (length/4
// beyond 100,000 characters), a function response at (name + JSON of the
// response)/4 plus its nested media parts, images 3,000 and PDFs 25,800,
// any other part its JSON length/4; floored. Lengths are in UTF-16 code
// units, as JavaScript counts.
func EstimateTokens(parts []*genai.Part) int {
	return partsQuarters(parts) / 4
}

func partsQuarters(parts []*genai.Part) int {
	q := 0
	for _, p := range parts {
		if p != nil {
			q += partQuarters(p)
		}
	}
	return q
}

func partQuarters(p *genai.Part) int {
	switch {
	case p.Text != "":
		return textQuarters(p.Text)
	case p.FunctionResponse != nil:
		return functionResponseQuarters(p.FunctionResponse)
	}
	var mime string
	if p.InlineData != nil {
		mime = p.InlineData.MIMEType
	}
	if mime == "" && p.FileData != nil {
		mime = p.FileData.MIMEType
	}
	if q, ok := mediaQuarters(mime); ok {
		return q
	}
	// A part with nothing set is gemini-cli's {text: ""}: no tokens.
	if reflect.ValueOf(*p).IsZero() {
		return 0
	}
	return jsonLen(normalize(p))
}

// functionResponseQuarters sizes a function response without its part
// wrapper: name, response JSON and, recursively, nested media parts.
func functionResponseQuarters(fr *genai.FunctionResponse) int {
	q := utf16Len(fr.Name)
	if fr.Response != nil {
		q += jsonLen(fr.Response)
	}
	if len(fr.Parts) > 0 {
		// The nested estimate is floored on its own, as gemini-cli's
		// recursive call returns a floored count. genai's nested parts
		// cannot nest again, so gemini-cli's depth limit of 3 never
		// applies.
		q += 4 * (nestedQuarters(fr.Parts) / 4)
	}
	return q
}

// nestedQuarters estimates a function response's own parts: genai's
// FunctionResponsePart holds only media, which is estimated by MIME type
// or else by JSON length.
func nestedQuarters(parts []*genai.FunctionResponsePart) int {
	q := 0
	for _, p := range parts {
		if p == nil {
			continue
		}
		var mime string
		if p.InlineData != nil {
			mime = p.InlineData.MIMEType
		}
		if mime == "" && p.FileData != nil {
			mime = p.FileData.MIMEType
		}
		if mq, ok := mediaQuarters(mime); ok {
			q += mq
			continue
		}
		q += jsonLen(normalize(p))
	}
	return q
}

func mediaQuarters(mime string) (int, bool) {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return 4 * imageTokens, true
	case strings.HasPrefix(mime, "application/pdf"):
		return 4 * pdfTokens, true
	}
	return 0, false
}

// textQuarters is gemini-cli's estimateTextTokens in quarter tokens.
func textQuarters(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			j := i + asciiPrefix(s[i:])
			ascii += j - i
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		other += units(r)
		i += size
	}
	if ascii+other > maxCharsForFullHeuristic {
		return ascii + other
	}
	return ascii + nonASCIIQuarters*other
}
