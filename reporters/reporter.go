package reporters

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/result"
)

// Reporter renders a finished run. Report is called once, after the run, with the complete
// result; it must not modify run.
type Reporter interface {
	Report(w io.Writer, run *result.Run) error
}

// Streamer is the optional capability of a [Reporter] that shows a run as it happens. The runner
// calls Event for every [result.Event], possibly from several goroutines; implementations are
// safe for concurrent use, treat the pointers in e as read-only, and return promptly. Event has
// no error: a streamer that cannot write keeps its first write error and returns it from Report.
type Streamer interface {
	Event(e result.Event)
	// Streams says what Event writes to Options.Live, so the caller knows where to point it.
	Streams() StreamKind
}

// StreamKind is what a [Streamer] writes to Options.Live.
type StreamKind int

const (
	// StreamsProgress is progress for a person watching the run (the console's ✓/✗ lines),
	// apart from the report: Options.Live belongs on the terminal (stdout), never in a report
	// file, and Options.TTY and Color describe it.
	StreamsProgress StreamKind = iota + 1
	// StreamsReport is the report itself, streamed as tests finish and completed by Report
	// (TAP): Options.Live must be the writer Report is given, a file or stdout.
	StreamsReport
)

// Options configures the built-in reporters. A nil *Options means the defaults; each field says
// which reporters read it.
type Options struct {
	// Color enables ANSI colours (console). The CLI decides: a TTY and no NO_COLOR.
	Color bool
	// TTY allows cursor control on Live (console shows the running test on a line it rewrites).
	// When false, live output is strictly one line per finished test.
	TTY bool
	// Live receives streamed output (console, tap). Nil disables streaming output.
	Live io.Writer
	// Verbose lists passing tests in the final console report even when they were streamed.
	Verbose bool
	// ExcerptLimit caps request/response/stderr excerpts, in bytes (console, junit, tap, html,
	// markdown). Zero means 2048. Cuts fall on UTF-8 boundaries and say how much was cut.
	ExcerptLimit int
	// MarkdownLimit caps the markdown report's size in bytes. Zero means 65000, which fits a
	// GitHub pull-request comment (65,536 characters).
	MarkdownLimit int
	// Title replaces the default title ("mcpspec run <id>") of the html and markdown reports.
	Title string
}

func (o *Options) orDefault() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.ExcerptLimit <= 0 {
		v.ExcerptLimit = 2048
	}
	if v.MarkdownLimit <= 0 {
		v.MarkdownLimit = 65000
	}
	return v
}

// Factory builds a reporter from options.
type Factory func(opts *Options) Reporter

// errNilRun is returned by every Report given a nil run.
var errNilRun = errors.New("report: nil run")

// ErrUnknown is returned by [New] for a name that is not a built-in reporter.
var ErrUnknown = errors.New("unknown reporter")

// Builtins returns a fresh registry of the built-in reporters by name: console, json, junit,
// tap, html and markdown. Callers may add their own entries to the returned map.
func Builtins() map[string]Factory {
	return map[string]Factory{
		"console":  func(o *Options) Reporter { return NewConsole(o) },
		"json":     func(o *Options) Reporter { return NewJSON(o) },
		"junit":    func(o *Options) Reporter { return NewJUnit(o) },
		"tap":      func(o *Options) Reporter { return NewTAP(o) },
		"html":     func(o *Options) Reporter { return NewHTML(o) },
		"markdown": func(o *Options) Reporter { return NewMarkdown(o) },
	}
}

// Names returns the built-in reporter names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(Builtins()))
}

// New builds the built-in reporter called name ("md" is accepted for markdown). An unknown name
// returns an error wrapping [ErrUnknown] that lists the valid names.
func New(name string, opts *Options) (Reporter, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "md" {
		n = "markdown"
	}
	f, ok := Builtins()[n]
	if !ok {
		return nil, fmt.Errorf("reporter %q: %w (valid: %s)", name, ErrUnknown, strings.Join(Names(), ", "))
	}
	return f(opts), nil
}

// Extension returns the conventional file extension (with dot) for a built-in reporter's output,
// so the CLI can name report files: ".txt", ".json", ".xml", ".tap", ".html", ".md".
func Extension(name string) string {
	switch strings.ToLower(name) {
	case "json":
		return ".json"
	case "junit":
		return ".xml"
	case "tap":
		return ".tap"
	case "html":
		return ".html"
	case "markdown", "md":
		return ".md"
	default:
		return ".txt"
	}
}
