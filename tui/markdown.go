package tui

import (
	"github.com/agentry-dev/agentry/tui/mdrender"
)

// markdown renders Markdown with mdrender at a width, remembering the
// last rendering of the live block so a frame whose block did not change
// costs nothing.
type markdown struct {
	width int
	style string
	r     *mdrender.Renderer

	lastIn, lastOut string
}

// setup (re)creates the renderer for a width and style ("dark" or
// "light"); it keeps the renderer when neither changed.
func (md *markdown) setup(width int, style string) {
	if width < 20 {
		width = 20
	}
	if md.r != nil && md.width == width && md.style == style {
		return
	}
	md.r = mdrender.New(mdrender.Options{Width: width, Style: style})
	md.width, md.style = width, style
	md.lastIn, md.lastOut = "", ""
}

// render renders a block: lines after a two-column margin, without blank
// lines before or after.
func (md *markdown) render(text string) string {
	if md.r == nil {
		md.setup(80, "dark")
	}
	return md.r.Render(text)
}

// renderLive renders the live block, from the cache when it is unchanged.
func (md *markdown) renderLive(text string) string {
	if text == md.lastIn && md.r != nil {
		return md.lastOut
	}
	md.lastIn, md.lastOut = text, md.render(text)
	return md.lastOut
}
