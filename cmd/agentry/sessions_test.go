package main

import (
	"strings"
	"testing"

	"github.com/agentry-dev/agentry/runtime"
)

// TestPrintEvents: "sessions show" of a session stored without a
// transcript prints each text with its author (the model that answered,
// else "model"), each tool call with its arguments and each result,
// folded as the transcript is.
func TestPrintEvents(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line\n", foldLines+2)
	conv := &runtime.StoredConversation{Messages: []runtime.StoredMessage{
		{Role: "user", Parts: []runtime.StoredPart{{Kind: runtime.StoredText, Text: "list the files"}}},
		{Role: "model", Model: "gemini-2.5-pro", Parts: []runtime.StoredPart{
			{Kind: runtime.StoredText, Text: "Listing <them>."},
			{Kind: runtime.StoredCall, Name: "ls", Args: map[string]any{"path": ".", "all": true}},
		}},
		{Role: "user", Parts: []runtime.StoredPart{{Kind: runtime.StoredResult, Name: "ls"}}},
		{Role: "model", Parts: []runtime.StoredPart{{Kind: runtime.StoredText, Text: long}}},
	}}
	var b strings.Builder
	printEvents(&b, conv, folder{id: "s1"})
	want := "user: list the files\n" +
		"gemini-2.5-pro: Listing <them>.\n" +
		`gemini-2.5-pro: [call ls {"all":true,"path":"."}]` + "\n" +
		"user: [result of ls]\n" +
		"model: line" + strings.Repeat("\n    line", foldLines-1) +
		"\n    … 2 more lines (agentry sessions show --full s1 prints them)\n"
	if got := b.String(); got != want {
		t.Errorf("printEvents =\n%s\nwant\n%s", got, want)
	}
}
