package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// series is one line (or bar set) of a chart.
type series struct {
	name  string
	color string
	ys    []float64
	bars  bool
	dash  bool
}

// chart is a small line chart over a shared x axis (seconds).
type chart struct {
	title, unit string
	xs          []float64
	series      []series
	// marks are vertical lines at x (stage boundaries), with labels.
	marks []mark
	// note says why a chart without data has none (wrapped to the chart's width).
	note string
}

type mark struct {
	x     float64
	label string
}

const (
	chartW, chartH         = 860, 240
	padL, padR, padT, padB = 64, 16, 28, 34
)

// noteChars is the longest line of a chart's note that fits its width at the note's 13px.
const noteChars = 96

// wrapWords splits s into lines of at most n characters, at spaces where it can.
func wrapWords(s string, n int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		for len([]rune(w)) > n {
			if cur.Len() > 0 {
				lines = append(lines, cur.String())
				cur.Reset()
			}
			r := []rune(w)
			lines, w = append(lines, string(r[:n])), string(r[n:])
		}
		if cur.Len() > 0 && len([]rune(cur.String()))+1+len([]rune(w)) > n {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// svg renders the chart; labels are escaped.
func (c chart) svg() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, esc(c.title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="ct">%s</text>`, padL, esc(c.title))
	if len(c.xs) == 0 {
		if c.note == "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no data</text></svg>`, chartW/2-30, chartH/2)
			return b.String()
		}
		for i, line := range wrapWords(c.note, noteChars) {
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">%s</text>`, padL, padT+40+18*i, esc(line))
		}
		b.WriteString(`</svg>`)
		return b.String()
	}
	xmin, xmax := c.xs[0], c.xs[len(c.xs)-1]
	for _, s := range c.series {
		if s.bars {
			// Bars are centred on their x: leave half a bar on each side.
			xmin, xmax = xmin-0.5, xmax+0.5
			break
		}
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	ymax := 0.0
	for _, s := range c.series {
		for _, y := range s.ys {
			if !math.IsNaN(y) {
				ymax = math.Max(ymax, y)
			}
		}
	}
	ymax = niceCeil(ymax)
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	px := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return padT + ph - y/ymax*ph }
	// Grid and y labels.
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="grid"/>`, padL, chartW-padR, py(y), py(y))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="yl">%s</text>`, padL-6, py(y)+4, esc(fmtNum(y)+c.unit))
	}
	for i := 0; i <= 5; i++ {
		x := xmin + (xmax-xmin)*float64(i)/5
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" class="xl">%ss</text>`, px(x), chartH-padB+16, esc(fmtNum(x)))
	}
	for _, m := range c.marks {
		if m.x <= xmin || m.x >= xmax {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" class="mark"/><text x="%.1f" y="%d" class="ml">%s</text>`,
			px(m.x), px(m.x), padT, padT+ph, px(m.x)+3, padT+10, esc(m.label))
	}
	for _, s := range c.series {
		if s.bars {
			w := math.Max(pw/float64(len(c.xs))-1, 1)
			for i, y := range s.ys {
				if i >= len(c.xs) || math.IsNaN(y) || y <= 0 {
					continue
				}
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.75"/>`, px(c.xs[i])-w/2, py(y), w, py(0)-py(y), s.color)
			}
			continue
		}
		var pts []string
		for i, y := range s.ys {
			if i >= len(c.xs) || math.IsNaN(y) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(c.xs[i]), py(y)))
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"/>`, s.color, dash, strings.Join(pts, " "))
	}
	// Legend.
	lx := float64(chartW - padR)
	for i := len(c.series) - 1; i >= 0; i-- {
		s := c.series[i]
		w := float64(len(s.name))*6.5 + 22
		lx -= w
		fmt.Fprintf(&b, `<rect x="%.1f" y="10" width="10" height="10" fill="%s"/><text x="%.1f" y="19" class="lg">%s</text>`, lx, s.color, lx+14, esc(s.name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtNum(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// sparkline draws a small inline series (for tables).
func sparkline(ys []float64) string {
	if len(ys) < 2 {
		return ""
	}
	m := 0.0
	for _, y := range ys {
		m = math.Max(m, y)
	}
	if m == 0 {
		m = 1
	}
	var pts []string
	for i, y := range ys {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", float64(i)/float64(len(ys)-1)*100, 20-y/m*18))
	}
	return `<svg class="spark" viewBox="0 0 100 22" xmlns="http://www.w3.org/2000/svg"><polyline fill="none" stroke="#3b6fd8" stroke-width="1.5" points="` + strings.Join(pts, " ") + `"/></svg>`
}
