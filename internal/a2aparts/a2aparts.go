// Package a2aparts converts a runtime message's content into A2A parts,
// for agentry's A2A clients (the remote agent, agentry attach).
package a2aparts

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentry-dev/agentry/runtime"
)

// FromContent converts content to A2A parts: text and references as
// text, media as raw bytes or a file URL; thoughts are the sender's own
// and are left out. Content with nothing to send is an error.
func FromContent(content []runtime.ContentPart) (a2a.ContentParts, error) {
	var out a2a.ContentParts
	for i, p := range content {
		switch p.Type {
		case runtime.PartText, runtime.PartReference:
			out = append(out, a2a.NewTextPart(p.Text))
		case runtime.PartThought:
		case runtime.PartMedia:
			switch {
			case p.Data != "":
				data, err := base64.StdEncoding.DecodeString(p.Data)
				if err != nil {
					return nil, fmt.Errorf("content[%d]: media data is not base64: %w", i, err)
				}
				part := a2a.NewRawPart(data)
				part.MediaType = p.MimeType
				out = append(out, part)
			case p.URI != "":
				out = append(out, a2a.NewFileURLPart(a2a.URL(p.URI), p.MimeType))
			default:
				return nil, fmt.Errorf("content[%d]: a media part needs data or a uri", i)
			}
		default:
			return nil, fmt.Errorf("content[%d]: unknown part type %q", i, p.Type)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the message has no content")
	}
	return out, nil
}
