package reporters

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

//go:embed html.tmpl
var htmlTemplate string

// HTML writes one self-contained HTML page: no external assets and no script, only inline CSS
// and an inline SVG latency chart. It has a summary header (verdict, counts, pass rate, what it
// means), the failures first with their details open, every test as a collapsible <details>
// grouped by collection, and a "failures only" toggle done in CSS. Every value is escaped by
// html/template.
type HTML struct {
	opts Options
}

// NewHTML returns the HTML reporter; it reads Options.Title and Options.ExcerptLimit.
func NewHTML(opts *Options) *HTML { return &HTML{opts: opts.orDefault()} }

type htmlData struct {
	Title, Verdict, VerdictClass string
	Counts                       result.Counts
	PassRate, Duration, Started  string
	Environment, Branch, Commit  string
	Interrupted                  bool
	Bailed                       bool // stopped by --bail
	Meaning                      []string
	Segments                     []htmlSegment
	Collections                  []htmlCollection
	Failures                     []htmlTest
	Chart                        htmlChart
	// CoverageTotal and Coverage are the coverage section (empty when none was recorded).
	CoverageTotal string
	Coverage      []htmlCoverage
}

// htmlCoverage is one row of the coverage table: one kind of one server.
type htmlCoverage struct {
	Collection, Server, Kind, Ratio, Missed string
}

// htmlSegment is one part of the stacked outcome bar.
type htmlSegment struct {
	Class string
	Count int
	Pct   float64
}

type htmlCollection struct {
	Name, File, Rate, Duration string
	Counts                     result.Counts
	Servers                    []string
	Tests                      []htmlTest
	// Findings are what servers sent after the last test on their session.
	Findings []result.Finding
}

type htmlTest struct {
	Anchor, Name, Collection, File, Status, Kind, Target, Server string
	Duration, Latency, SkipReason, Attempts                      string
	Failures                                                     []htmlFailure
	Error                                                        *result.Error
	Hint                                                         string
	AttemptRows                                                  []htmlAttempt
	Request, Response, Stderr                                    string
	Extracted                                                    [][2]string
	Findings                                                     []result.Finding
	// Open renders the <details> expanded (the failures section).
	Open bool
}

type htmlFailure struct {
	result.Failure
	Where string
	// Block renders a multi-line message (an expression error and its caret line) in
	// monospace, so the caret stays under the column it points at.
	Block bool
}

type htmlAttempt struct {
	N                         int
	Status, Duration, Latency string
	Detail                    string
}

// htmlChart is the inline SVG latency chart: one horizontal bar per test, slowest first.
type htmlChart struct {
	Width, Height int
	Bars          []htmlBar
	More          int
}

type htmlBar struct {
	X, Y, W int
	TextY   int
	ValueX  int
	Label   string
	Value   string
	Status  string
	Anchor  string
}

// chartTop caps the number of bars so the chart stays readable.
const chartTop = 40

// Report implements [Reporter].
func (h *HTML) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	tmpl, err := template.New("report").Parse(htmlTemplate)
	if err != nil {
		return fmt.Errorf("html report: parse template: %w", err)
	}
	if err := tmpl.Execute(w, h.data(run)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

func (h *HTML) data(run *result.Run) htmlData {
	n := run.Counts()
	d := htmlData{
		Title:        title(h.opts, run),
		Verdict:      statusWord(run),
		VerdictClass: strings.ToLower(statusWord(run)),
		Counts:       n,
		PassRate:     fmtRate(n),
		Duration:     textfmt.Duration(run.Duration),
		Started:      fmtTime(run.StartedAt),
		Environment:  run.Environment,
		Interrupted:  run.Interrupted,
		Bailed:       run.BailedAfter != "",
		Meaning:      interpret(run),
	}
	if run.Git != nil {
		d.Branch, d.Commit = run.Git.Branch, textfmt.ShortCommit(run.Git.Commit)
	}
	tests := map[*result.Test]htmlTest{}
	for _, it := range items(run) {
		tests[it.T] = h.test(it)
	}
	for _, c := range run.Collections {
		if c == nil {
			continue
		}
		hc := htmlCollection{Name: c.Name, File: c.File, Counts: c.Counts(), Duration: textfmt.Duration(c.Duration),
			Findings: excerptFindings(c.Findings)}
		hc.Rate = fmtRate(hc.Counts)
		for _, s := range c.Servers {
			v := s.Name + " · " + s.Transport + " " + s.Target
			if s.ServerName != "" {
				v += " · " + strings.TrimSpace(s.ServerName+" "+s.ServerVersion)
			}
			if s.ProtocolVersion != "" {
				v += " · MCP " + s.ProtocolVersion
			}
			hc.Servers = append(hc.Servers, v)
		}
		for _, t := range c.Tests {
			if t != nil {
				hc.Tests = append(hc.Tests, tests[t])
			}
		}
		d.Collections = append(d.Collections, hc)
	}
	for _, it := range problems(run) {
		ft := tests[it.T]
		ft.Open = true
		d.Failures = append(d.Failures, ft)
	}
	if n.Total > 0 {
		for _, s := range []htmlSegment{{"passed", n.Passed, 0}, {"failed", n.Failed, 0}, {"error", n.Errored, 0}, {"skipped", n.Skipped, 0}} {
			if s.Count > 0 {
				s.Pct = float64(int(float64(s.Count)*10000/float64(n.Total))) / 100
				d.Segments = append(d.Segments, s)
			}
		}
	}
	d.Chart = chart(run)
	d.CoverageTotal = coverageTotal(run)
	for _, c := range run.Collections {
		if c == nil || c.Coverage == nil {
			continue
		}
		for _, s := range c.Coverage.Servers {
			for _, k := range kinds(s) {
				missed := k.K.Missed
				more := ""
				if len(missed) > maxMissedNames {
					more = fmt.Sprintf(", … (%d more)", len(missed)-maxMissedNames)
					missed = missed[:maxMissedNames]
				}
				d.Coverage = append(d.Coverage, htmlCoverage{Collection: c.Name, Server: s.Server, Kind: k.Name,
					Ratio: fmt.Sprintf("%d/%d", len(k.K.Exercised), k.K.Advertised), Missed: strings.Join(missed, ", ") + more})
			}
		}
	}
	return d
}

func (h *HTML) test(it item) htmlTest {
	lim := h.opts.ExcerptLimit
	t := it.T
	ht := htmlTest{
		Anchor:     "t" + strconv.Itoa(it.N),
		Name:       t.Name,
		Collection: it.Col.Name,
		File:       it.Col.File,
		Status:     string(t.Status),
		Kind:       t.Kind,
		Target:     t.Target,
		Server:     t.Server,
		Duration:   textfmt.Duration(t.Duration),
		Latency:    latencyText(t.Latency),
		SkipReason: t.SkipReason,
		Error:      t.Error,
		Hint:       hint(t.Error),
		Request:    excerpt(t.Request, lim),
		Response:   excerpt(t.Response, lim),
		Stderr:     excerpt(t.Stderr, lim),
	}
	if retried(t) {
		ht.Attempts = attemptLine(t)
	}
	for _, f := range t.Failures {
		f.Expected, f.Actual = excerpt(f.Expected, lim), excerpt(f.Actual, lim)
		ht.Failures = append(ht.Failures, htmlFailure{Failure: f, Where: location(it.Col, &f), Block: strings.Contains(f.Message, "\n")})
	}
	for i, a := range t.Attempts {
		row := htmlAttempt{N: i + 1, Status: string(a.Status), Duration: textfmt.Duration(a.Duration), Latency: latencyText(a.Latency)}
		var parts []string
		if a.Error != nil {
			parts = append(parts, a.Error.Category+": "+a.Error.Message)
		}
		for _, f := range a.Failures {
			parts = append(parts, f.Assertion+": "+f.Message)
		}
		row.Detail = strings.Join(parts, "; ")
		ht.AttemptRows = append(ht.AttemptRows, row)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Extracted)) {
		ht.Extracted = append(ht.Extracted, [2]string{k, t.Extracted[k]})
	}
	ht.Findings = excerptFindings(t.Findings)
	return ht
}

// excerptFindings returns fs with their frames cut for display.
func excerptFindings(fs []result.Finding) []result.Finding {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Frame = excerpt(out[i].Frame, 200)
	}
	return out
}

// chart lays out the latency bars in a 800-unit-wide viewBox.
func chart(run *result.Run) htmlChart {
	const (
		width    = 800
		labelW   = 330
		valueW   = 70
		barH     = 18
		gap      = 6
		maxLabel = 44
	)
	ranked := slowest(run, len(items(run)))
	c := htmlChart{Width: width}
	if len(ranked) > chartTop {
		c.More = len(ranked) - chartTop
		ranked = ranked[:chartTop]
	}
	if len(ranked) == 0 {
		return c
	}
	maxLat := ranked[0].T.Latency
	for i, it := range ranked {
		w := int(float64(width-labelW-valueW) * float64(it.T.Latency) / float64(maxLat))
		if w < 1 {
			w = 1
		}
		label := oneLine(fullName(it.Col, it.T))
		if utf8.RuneCountInString(label) > maxLabel {
			label = string([]rune(label)[:maxLabel-1]) + "…"
		}
		y := i * (barH + gap)
		c.Bars = append(c.Bars, htmlBar{
			X: labelW, Y: y, W: w, TextY: y + barH - 5, ValueX: labelW + w + 6, Label: label, Value: textfmt.Duration(it.T.Latency),
			Status: string(it.T.Status), Anchor: "t" + strconv.Itoa(it.N),
		})
	}
	c.Height = len(ranked)*(barH+gap) - gap
	return c
}

// latencyText is the latency, or "" when none was measured (no response arrived).
func latencyText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return textfmt.Duration(d)
}
