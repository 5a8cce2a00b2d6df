package termtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

// The benchmark anchor's answer: 2,000 chunks "wNNNN ", a blank line after
// every 50th, streamed 5 ms apart.
const (
	// AnchorChunks is the number of chunks of the anchor's answer.
	AnchorChunks = 2000
	// AnchorBlankEvery is how many chunks make a paragraph of it.
	AnchorBlankEvery = 50
	// AnchorDelay is the pause before each of its chunks.
	AnchorDelay = 5 * time.Millisecond
)

// WordChunks returns n chunks "w0000 ", "w0001 ", …; every blankEvery-th
// chunk (when blankEvery > 0) ends its paragraph with a blank line instead
// of the space ("w0049\n\n"), and so does the last.
func WordChunks(n, blankEvery int) []string {
	chunks := make([]string, n)
	for i := range chunks {
		end := " "
		if (blankEvery > 0 && (i+1)%blankEvery == 0) || i == n-1 {
			end = "\n\n"
		}
		chunks[i] = fmt.Sprintf("w%04d%s", i, end)
	}
	return chunks
}

// WordAnswer is the text the chunks of WordChunks(n, blankEvery) make,
// without the final blank line: what a model turn shows.
func WordAnswer(n, blankEvery int) string {
	return strings.TrimSuffix(strings.Join(WordChunks(n, blankEvery), ""), "\n\n")
}

// AnchorStep is the anchor's answer as a step of the fake Gemini server:
// [AnchorChunks] text chunks from [WordChunks], [AnchorDelay] apart
// (fakegemini.Slow waits the delay before each chunk).
func AnchorStep() fakegemini.Step {
	return WordStep(AnchorChunks, AnchorBlankEvery, AnchorDelay)
}

// WordStep streams WordChunks(n, blankEvery) as text chunks of a fake Gemini
// answer, delay apart (none when zero).
func WordStep(n, blankEvery int, delay time.Duration) fakegemini.Step {
	st := fakegemini.Text(WordChunks(n, blankEvery)...)
	if delay > 0 {
		st = fakegemini.Slow(st, delay)
	}
	return st
}
