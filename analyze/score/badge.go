package score

import (
	"fmt"
	"html"
	"io"
	"unicode/utf8"
)

// BadgeText is what the badge says: "87 · v1".
func BadgeText(r *Result) string { return fmt.Sprintf("%d · %s", r.Score, r.Rubric) }

// BadgeColor is the badge's colour for a score: green from 90, yellow-green from 75, yellow
// from 60, orange from 40, red below.
func BadgeColor(score int) string {
	switch {
	case score >= 90:
		return "#4c1"
	case score >= 75:
		return "#a4a61d"
	case score >= 60:
		return "#dfb317"
	case score >= 40:
		return "#fe7d37"
	}
	return "#e05d44"
}

// WriteBadge writes a flat SVG badge "MCP score | 87 · v1", sized from the text so it needs no
// font metrics (about 7 px per character at 11 px Verdana). The output is deterministic.
func WriteBadge(w io.Writer, r *Result) error {
	label, value := "MCP score", BadgeText(r)
	lw := 10 + 7*utf8.RuneCountInString(label)
	vw := 10 + 7*utf8.RuneCountInString(value)
	total := lw + vw
	alt := html.EscapeString(label + ": " + value)
	_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s">
<title>%s</title>
<linearGradient id="s" x2="0" y2="100%%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>
<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>
<g clip-path="url(#r)"><rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>
<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">
<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text>
<text x="%d" y="15" fill="#010101" fill-opacity=".3">%s</text><text x="%d" y="14">%s</text>
</g>
</svg>
`, total, alt, alt, total, lw, lw, vw, BadgeColor(r.Score), total,
		lw/2, label, lw/2, label, lw+vw/2, html.EscapeString(value), lw+vw/2, html.EscapeString(value))
	return err
}
