package reporters

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/result"
)

// render runs one reporter over run, streaming events first when stream is set.
func render(t *testing.T, name string, opts *Options, run *result.Run, stream bool) []byte {
	t.Helper()
	rep, err := New(name, opts)
	if err != nil {
		t.Fatal(err)
	}
	if stream {
		s, ok := rep.(Streamer)
		if !ok {
			t.Fatalf("%s is not a Streamer", name)
		}
		replay(run, s)
	}
	var buf bytes.Buffer
	if opts != nil && opts.Live != nil {
		buf.Write(opts.Live.(*bytes.Buffer).Bytes())
	}
	if err := rep.Report(&buf, run); err != nil {
		t.Fatalf("%s: Report: %v", name, err)
	}
	return buf.Bytes()
}

// replay sends the events a runner would send for run, sequentially.
func replay(run *result.Run, s Streamer) {
	s.Event(result.Event{Kind: result.RunStarted, At: run.StartedAt, Run: run})
	for _, c := range run.Collections {
		s.Event(result.Event{Kind: result.CollectionStarted, At: c.StartedAt, Run: run, Collection: c})
		for _, tc := range c.Tests {
			s.Event(result.Event{Kind: result.TestStarted, Run: run, Collection: c, Test: tc})
			s.Event(result.Event{Kind: result.TestFinished, Run: run, Collection: c, Test: tc})
		}
		s.Event(result.Event{Kind: result.CollectionFinished, Run: run, Collection: c})
	}
	s.Event(result.Event{Kind: result.RunFinished, Run: run})
}

func TestGolden(t *testing.T) {
	cases := []struct {
		file   string
		name   string
		opts   func() *Options
		run    func() *result.Run
		stream bool
	}{
		{"console.golden", "console", nil, sampleRun, false},
		{"console-color.golden", "console", func() *Options { return &Options{Color: true} }, sampleRun, false},
		{"console-stream.golden", "console", func() *Options { return &Options{Live: new(bytes.Buffer)} }, sampleRun, true},
		{"console-tty.golden", "console", func() *Options { return &Options{Live: new(bytes.Buffer), TTY: true, Color: true} }, sampleRun, true},
		{"console-interrupted.golden", "console", nil, interruptedRun, false},
		{"json.golden", "json", nil, sampleRun, false},
		{"junit.golden", "junit", nil, sampleRun, false},
		{"tap.golden", "tap", nil, sampleRun, false},
		{"tap-stream.golden", "tap", func() *Options { return &Options{Live: new(bytes.Buffer)} }, sampleRun, true},
		{"tap-interrupted.golden", "tap", nil, interruptedRun, false},
		{"console-bail.golden", "console", nil, bailedRun, false},
		{"tap-bail.golden", "tap", nil, bailedRun, false},
		{"markdown-bail.golden", "markdown", nil, bailedRun, false},
		{"html.golden", "html", nil, sampleRun, false},
		{"markdown.golden", "markdown", nil, sampleRun, false},
		{"markdown-pass.golden", "markdown", nil, passingRun, false},
		{"console-findings.golden", "console", nil, findingsRun, false},
		{"json-findings.golden", "json", nil, findingsRun, false},
		{"junit-findings.golden", "junit", nil, findingsRun, false},
		{"tap-findings.golden", "tap", nil, findingsRun, false},
		{"tap-findings-stream.golden", "tap", func() *Options { return &Options{Live: new(bytes.Buffer)} }, findingsRun, true},
		{"html-findings.golden", "html", nil, findingsRun, false},
		{"markdown-findings.golden", "markdown", nil, findingsRun, false},
		{"console-coverage.golden", "console", nil, coverageRun, false},
		{"tap-coverage.golden", "tap", nil, coverageRun, false},
		{"markdown-coverage.golden", "markdown", nil, coverageRun, false},
		{"junit-coverage.golden", "junit", nil, coverageRun, false},
		{"html-coverage.golden", "html", nil, coverageRun, false},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			var opts *Options
			if tc.opts != nil {
				opts = tc.opts()
			}
			got := render(t, tc.name, opts, tc.run(), tc.stream)
			golden.Check(t, filepath.Join("testdata", tc.file), got)
			// Determinism: a second render of a fresh reporter is byte-identical.
			if tc.opts != nil {
				opts = tc.opts()
			}
			if again := render(t, tc.name, opts, tc.run(), tc.stream); !bytes.Equal(got, again) {
				t.Errorf("%s: output differs between two renders of the same run", tc.name)
			}
		})
	}
}

// passingRun is the sample run with only its passing tests.
func passingRun() *result.Run {
	r := sampleRun()
	for _, c := range r.Collections {
		var keep []*result.Test
		for _, t := range c.Tests {
			if t.Status == result.Passed {
				keep = append(keep, t)
			}
		}
		c.Tests = keep
	}
	return r
}
