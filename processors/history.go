package processors

import (
	"google.golang.org/genai"
)

// InterruptedResponse is the model turn gemini-cli puts between a turn the
// model never answered (its reply was cut off) and the next prompt, so that
// two user turns never follow each other.
const InterruptedResponse = "[The previous response was interrupted before it completed.]"

// curateHistory shapes the session's contents as gemini-cli's chat history
// is shaped before it is sent: thoughts are not sent back (gemini-cli never
// keeps them; a signature they carried stays with the turn's first
// function call), and a prompt that follows an unanswered user turn gets
// InterruptedResponse before it. The contents are ADK's copies; changed
// ones are replaced, never written.
func curateHistory(contents []*genai.Content) []*genai.Content {
	var out []*genai.Content // nil until something changes
	for i, c := range contents {
		if c == nil {
			continue
		}
		next := c
		if c.Role == genai.RoleModel && hasThought(c) {
			next = withoutThoughts(c)
		}
		prev := lastRole(contents[:i])
		if out != nil {
			prev = lastRole(out) // turns dropped so far do not count
		}
		interrupted := c.Role == genai.RoleUser && !answersCalls(c) && prev == genai.RoleUser
		if out == nil && (next != c || interrupted) {
			out = make([]*genai.Content, 0, len(contents)+1)
			for _, p := range contents[:i] {
				if p != nil {
					out = append(out, p)
				}
			}
		}
		if out == nil {
			continue
		}
		if interrupted {
			out = append(out, genai.NewContentFromText(InterruptedResponse, genai.RoleModel))
		}
		if next != nil && len(next.Parts) > 0 {
			out = append(out, next)
		}
	}
	if out == nil {
		return contents
	}
	return out
}

// lastRole is the role of the last content.
func lastRole(contents []*genai.Content) string {
	for i := len(contents) - 1; i >= 0; i-- {
		if contents[i] != nil {
			return contents[i].Role
		}
	}
	return ""
}

// answersCalls reports whether a user turn holds function responses.
func answersCalls(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

func hasThought(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.Thought {
			return true
		}
	}
	return false
}

// withoutThoughts returns c without its thought parts. A thought's
// signature moves to the first function call that has none, where Gemini
// requires one.
func withoutThoughts(c *genai.Content) *genai.Content {
	out := &genai.Content{Role: c.Role, Parts: make([]*genai.Part, 0, len(c.Parts))}
	var sig []byte
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.Thought {
			if sig == nil && len(p.ThoughtSignature) > 0 {
				sig = p.ThoughtSignature
			}
			continue
		}
		if sig != nil && p.FunctionCall != nil {
			if len(p.ThoughtSignature) == 0 {
				cp := *p
				cp.ThoughtSignature = sig
				p = &cp
			}
			sig = nil
		}
		out.Parts = append(out.Parts, p)
	}
	return out
}

// coalesceRoles merges consecutive contents of one role into one, as
// gemini-cli's coalesceConsecutiveRoles does: the session context and the
// first prompt go as one user turn of two parts. It compacts the slice in
// place, which must be the caller's own; merged contents are new ones.
func coalesceRoles(contents []*genai.Content) []*genai.Content {
	out := contents[:0]
	owned := false // out's last content was made here
	for _, c := range contents {
		if c == nil {
			continue
		}
		n := len(out)
		if n == 0 || out[n-1].Role != c.Role {
			out = append(out, c)
			owned = false
			continue
		}
		if !owned {
			prev := out[n-1]
			merged := &genai.Content{Role: prev.Role, Parts: make([]*genai.Part, 0, len(prev.Parts)+len(c.Parts))}
			out[n-1], owned = merged, true
			merged.Parts = append(merged.Parts, prev.Parts...)
		}
		out[n-1].Parts = append(out[n-1].Parts, c.Parts...)
	}
	clear(contents[len(out):])
	return out
}
