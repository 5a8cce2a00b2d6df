package tui

import (
	"charm.land/glamour/v2"
)

// markdown renders Markdown with glamour at a width, remembering the last
// rendering of the live block so a frame whose block did not change costs
// nothing.
type markdown struct {
	width int
	style string
	r     *glamour.TermRenderer

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
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(width))
	if err != nil {
		// The built-in styles always load; keep the old renderer if not.
		return
	}
	md.r, md.width, md.style = r, width, style
	md.lastIn, md.lastOut = "", ""
}

// render renders a block, trimmed of glamour's padding. Text it cannot
// render is shown as it is.
func (md *markdown) render(text string) string {
	if md.r == nil {
		md.setup(80, "dark")
	}
	out, err := md.r.Render(text)
	if err != nil {
		return wrap(text, md.width)
	}
	return trimRendered(out)
}

// renderLive renders the live block, from the cache when it is unchanged.
func (md *markdown) renderLive(text string) string {
	if text == md.lastIn && md.r != nil {
		return md.lastOut
	}
	md.lastIn, md.lastOut = text, md.render(text)
	return md.lastOut
}
