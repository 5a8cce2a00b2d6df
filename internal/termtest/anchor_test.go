package termtest

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/internal/fakegemini"
)

func TestWordChunks(t *testing.T) {
	got := WordChunks(5, 2)
	want := []string{"w0000 ", "w0001\n\n", "w0002 ", "w0003\n\n", "w0004\n\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("WordChunks(5, 2) = %q", got)
	}
	if got := WordAnswer(5, 2); got != "w0000 w0001\n\nw0002 w0003\n\nw0004" {
		t.Errorf("WordAnswer(5, 2) = %q", got)
	}
	if got := WordAnswer(3, 0); got != "w0000 w0001 w0002" {
		t.Errorf("WordAnswer(3, 0) = %q", got)
	}
	anchor := WordChunks(AnchorChunks, AnchorBlankEvery)
	if len(anchor) != 2000 || anchor[49] != "w0049\n\n" || anchor[50] != "w0050 " || anchor[1999] != "w1999\n\n" {
		t.Errorf("anchor chunks %q … %q", anchor[:51], anchor[1999])
	}
	if n := strings.Count(WordAnswer(AnchorChunks, AnchorBlankEvery), "\n\n"); n != 39 {
		t.Errorf("the anchor's answer has %d paragraph breaks, want 39", n)
	}
}

// streamTexts streams one answer from the fake server through the genai
// client and returns its chunks' texts and how long the stream took.
func streamTexts(t *testing.T, step fakegemini.Step) ([]string, time.Duration) {
	t.Helper()
	srv := fakegemini.New(t)
	srv.Enqueue(step)
	c := srv.Client(t.Context())
	start := time.Now()
	var texts []string
	for resp, err := range c.Models.GenerateContentStream(t.Context(), "gemini-2.5-flash", genai.Text("count"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, resp.Text())
	}
	return texts, time.Since(start)
}

func TestAnchorStepStreamsEveryChunk(t *testing.T) {
	// The anchor's chunks, unpaced, through the real client.
	texts, _ := streamTexts(t, WordStep(AnchorChunks, AnchorBlankEvery, 0))
	if strings.Join(texts, "|") != strings.Join(WordChunks(AnchorChunks, AnchorBlankEvery), "|") {
		t.Errorf("%d chunks arrived, not the anchor's 2,000", len(texts))
	}
}

func TestWordStepIsPaced(t *testing.T) {
	// A timer never fires early: 20 chunks 5 ms apart take at least 100
	// ms, however loaded the machine.
	texts, took := streamTexts(t, WordStep(20, 0, AnchorDelay))
	if len(texts) != 20 || took < 20*AnchorDelay {
		t.Errorf("%d chunks in %v, want 20 in at least %v", len(texts), took, 20*AnchorDelay)
	}
}
