package idecontext_test

import (
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/agentry-dev/agentry/ide/idecontext"
	"github.com/agentry-dev/agentry/ide/idewire"
	"github.com/agentry-dev/agentry/sessions/listing"
)

// TestListingShowsThePrompt: a session listing shows a prompt as the user
// wrote it, not the editor's context stored ahead of it; a prompt that
// only looks like one is kept whole.
func TestListingShowsThePrompt(t *testing.T) {
	c := idecontext.Normalize(ws(idewire.File{Path: "/w/a.go", Timestamp: 2, IsActive: true}, idewire.File{Path: "/w/b.go", Timestamp: 1}))
	moved := idecontext.Normalize(ws(idewire.File{Path: "/w/b.go", Timestamp: 3, IsActive: true}, idewire.File{Path: "/w/a.go", Timestamp: 2}))
	for _, text := range []string{idecontext.Full(c), idecontext.Delta(c, moved)} {
		var s listing.Summary
		s.AddUserEvent(time.Unix(1, 0), &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}, {Text: "fix the bug"}}})
		if s.FirstPrompt != "fix the bug" || s.Prompts != 1 {
			t.Errorf("listing of a prompt with its context: %q, %d prompts", s.FirstPrompt, s.Prompts)
		}
	}
	var s listing.Summary
	typed := idecontext.FullHeader + " (typed)"
	s.AddUserEvent(time.Unix(1, 0), &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: typed}}})
	if s.FirstPrompt != typed {
		t.Errorf("a typed prompt listed as %q", s.FirstPrompt)
	}
}
