package reporters

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/result"
)

func TestNew(t *testing.T) {
	for _, name := range []string{"console", "json", "junit", "tap", "html", "markdown", "md", " JSON "} {
		if _, err := New(name, nil); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
	_, err := New("sarif-ish", nil)
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "console, html, json, junit, markdown, tap") {
		t.Errorf("New(unknown) = %v, want ErrUnknown listing the names", err)
	}
	if got := strings.Join(Names(), ","); got != "console,html,json,junit,markdown,tap" {
		t.Errorf("Names() = %s", got)
	}
	for name, ext := range map[string]string{"junit": ".xml", "json": ".json", "tap": ".tap", "html": ".html", "markdown": ".md", "console": ".txt"} {
		if got := Extension(name); got != ext {
			t.Errorf("Extension(%s) = %s, want %s", name, got, ext)
		}
	}
}

// bigRun has n failing tests with large responses, to push the markdown limit.
func bigRun(n int) *result.Run {
	c := &result.Collection{Name: "big", File: "big.yaml", StartedAt: t0}
	for i := range n {
		c.Tests = append(c.Tests, &result.Test{
			ID: fmt.Sprint(i), Name: fmt.Sprintf("test %d «ü»", i), Kind: "tool", Status: result.Failed,
			Duration: time.Duration(i+1) * time.Millisecond, Latency: time.Duration(i+1) * time.Millisecond,
			Attempts: []result.Attempt{{Status: result.Failed}},
			Failures: []result.Failure{{Assertion: "equals", Path: "$.x", Expected: strings.Repeat("é", 900), Actual: "b", Message: "differs"}},
			Response: strings.Repeat("ツ", 3000),
		})
	}
	return &result.Run{SchemaVersion: "1", ID: "big", StartedAt: t0, Collections: []*result.Collection{c}}
}

func TestMarkdownFitsAComment(t *testing.T) {
	for _, tc := range []struct {
		n, limit  int
		truncated bool
	}{
		{3, 0, false},
		{400, 0, true},
		{400, 9000, true},
	} {
		t.Run(fmt.Sprintf("%d-failures-limit-%d", tc.n, tc.limit), func(t *testing.T) {
			out := render(t, "markdown", &Options{MarkdownLimit: tc.limit}, bigRun(tc.n), false)
			limit := tc.limit
			if limit == 0 {
				limit = 65000
			}
			if len(out) > limit {
				t.Errorf("markdown is %d bytes, limit %d", len(out), limit)
			}
			if !utf8.Valid(out) {
				t.Error("markdown cut inside a UTF-8 sequence")
			}
			note := bytes.Contains(out, []byte("not shown here"))
			if note != tc.truncated {
				t.Errorf("truncation note present = %v, want %v", note, tc.truncated)
			}
			if !bytes.Contains(out, []byte("### Latency")) {
				t.Error("latency table dropped; it must survive truncation")
			}
			if opens, closes := bytes.Count(out, []byte("<details>")), bytes.Count(out, []byte("</details>")); opens != closes {
				t.Errorf("unbalanced <details>: %d open, %d close", opens, closes)
			}
		})
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`a|b`:          `a\|b`,
		`<img src=x>`:  `&lt;img src=x&gt;`,
		"two\nlines":   "two lines",
		"*bold* _it_":  `\*bold\* \_it\_`,
		"ctl\x1b[31m!": "ctl\uFFFD\\[31m!",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := mdCode("a`b|c"); got != "``a`b\\|c``" {
		t.Errorf("mdCode = %q", got)
	}
	if got := mdFence("x\n```\ny"); !strings.HasPrefix(got, "````\n") || !strings.HasSuffix(got, "\n````\n") {
		t.Errorf("mdFence did not lengthen its fence: %q", got)
	}
}

func TestMarkdownKeepsMultiLineMessages(t *testing.T) {
	msg := "expr failed: unknown name respons\n (1:1)\n | respons.x == 1\n | ^"
	got := mdMessage(msg)
	want := "expr failed: unknown name respons\n\n  ```\n  " + strings.ReplaceAll(msg, "\n", "\n  ") + "\n  ```"
	if got != want {
		t.Errorf("mdMessage:\n%s\nwant:\n%s", got, want)
	}
	if got := mdMessage("one line"); got != "one line" {
		t.Errorf("mdMessage(one line) = %q", got)
	}
	run := sampleRun()
	run.Collections[0].Tests[1].Failures[0].Message = msg
	out := string(render(t, "markdown", nil, run, false))
	if !strings.Contains(out, "\n   | respons.x == 1\n   | ^\n") {
		t.Errorf("the caret line lost its column in the markdown report:\n%s", out)
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	run := sampleRun()
	run.Collections[0].Name = `<img src=x onerror=alert(1)>`
	run.Collections[0].Tests[0].Name = `"><script>alert(2)</script>`
	out := string(render(t, "html", &Options{Title: `</title><script>x()</script>`}, run, false))
	for _, bad := range []string{"<script", "<img", "<link", "<iframe", "url(", "@import"} {
		if strings.Contains(out, bad) {
			t.Errorf("html output contains %q: unescaped input or an external asset", bad)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "&lt;/title&gt;&lt;script&gt;x()"} {
		if !strings.Contains(out, want) {
			t.Errorf("html output lacks the escaped form %q", want)
		}
	}
}

func TestConsoleNeverEmitsControlCharacters(t *testing.T) {
	run := sampleRun()
	run.Collections[0].Tests[1].Failures[0].Actual = "\x1b]0;pwned\x07\x1b[2J"
	out := render(t, "console", nil, run, false)
	if bytes.ContainsAny(out, "\x1b\x07\x00") {
		t.Errorf("console output carries control characters from the server: %q", out)
	}
}

func TestConsoleColorOnlyWhenAsked(t *testing.T) {
	if out := render(t, "console", nil, sampleRun(), false); bytes.Contains(out, []byte("\x1b[")) {
		t.Error("colour without Options.Color")
	}
	if out := render(t, "console", &Options{Color: true}, sampleRun(), false); !bytes.Contains(out, []byte(ansiRed)) {
		t.Error("no colour with Options.Color")
	}
	live := new(bytes.Buffer)
	render(t, "console", &Options{Live: live}, sampleRun(), true)
	if bytes.Contains(live.Bytes(), []byte("\r")) || bytes.Contains(live.Bytes(), []byte("\x1b")) {
		t.Error("cursor control on a non-TTY live stream")
	}
	if got := strings.Count(live.String(), "\n"); got != 8 {
		t.Errorf("live stream has %d lines, want one per test (8)", got)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorsAreReturned(t *testing.T) {
	for _, name := range Names() {
		rep, _ := New(name, nil)
		if err := rep.Report(errWriter{}, sampleRun()); err == nil {
			t.Errorf("%s: Report to a failing writer returned nil", name)
		}
	}
	c := NewConsole(&Options{Live: errWriter{}})
	replay(sampleRun(), c)
	if err := c.Report(new(bytes.Buffer), sampleRun()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("console: live write error not reported: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestStreamersAreConcurrencySafe sends events from many goroutines, as a parallel runner does;
// run with -race. Every test is reported exactly once, whole lines never interleave.
func TestStreamersAreConcurrencySafe(t *testing.T) {
	run := bigRun(64)
	col := run.Collections[0]
	for _, name := range []string{"console", "tap"} {
		t.Run(name, func(t *testing.T) {
			live := &syncBuffer{}
			rep, _ := New(name, &Options{Live: live, TTY: true})
			s := rep.(Streamer)
			s.Event(result.Event{Kind: result.RunStarted, Run: run})
			var wg sync.WaitGroup
			for _, tc := range col.Tests {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s.Event(result.Event{Kind: result.TestStarted, Run: run, Collection: col, Test: tc})
					s.Event(result.Event{Kind: result.TestFinished, Run: run, Collection: col, Test: tc})
				}()
			}
			wg.Wait()
			s.Event(result.Event{Kind: result.RunFinished, Run: run})
			var tail bytes.Buffer
			if err := rep.Report(&tail, run); err != nil {
				t.Fatal(err)
			}
			out := live.b.String()
			for _, tc := range col.Tests {
				if n := strings.Count(out, "big › "+tc.Name+"\n") + strings.Count(out, "big › "+tc.Name+"  "); n != 1 {
					t.Errorf("%s reported %d times on the live stream", tc.Name, n)
				}
			}
			if name == "tap" && !strings.HasSuffix(tail.String(), "1..64\n") {
				t.Errorf("tap stream not completed by Report: %q", tail.String())
			}
		})
	}
}

// TestPartialResults feeds every reporter a run a crashing or buggy producer could leave behind.
func TestPartialResults(t *testing.T) {
	run := &result.Run{Collections: []*result.Collection{
		nil,
		{Name: "", Tests: []*result.Test{
			nil,
			{Name: "errored without error", Status: result.Errored},
			{Name: "failed without failures", Status: result.Failed},
			{Name: "odd status", Status: "weird"},
			{Name: "", Status: result.Skipped},
		}},
	}}
	for _, name := range Names() {
		rep, _ := New(name, &Options{Live: new(bytes.Buffer)})
		if s, ok := rep.(Streamer); ok {
			s.Event(result.Event{Kind: result.TestFinished})
			s.Event(result.Event{Kind: result.TestFinished, Test: run.Collections[1].Tests[1]})
		}
		var buf bytes.Buffer
		if err := rep.Report(&buf, run); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := rep.Report(&buf, nil); err == nil {
			t.Errorf("%s: Report(nil) returned nil", name)
		}
	}
}

// TestAuditFindingsAreNotAssertions: an audit run's failed tests are security findings, and
// the HTML and Markdown say so instead of "failed assertions".
func TestAuditFindingsAreNotAssertions(t *testing.T) {
	fail := func(name, rule string) *result.Test {
		f := []result.Failure{{Assertion: rule, Message: "the description changed; fix: review"}}
		return &result.Test{ID: name, Name: name, Kind: "audit", Status: result.Failed, Failures: f,
			Attempts: []result.Attempt{{Status: result.Failed, Failures: f}}}
	}
	run := &result.Run{SchemaVersion: result.SchemaVersion, ID: "audit-1", Collections: []*result.Collection{{Name: "mcpspec audit: s",
		Tests: []*result.Test{fail("[high] drift-tool-changed: tool add", "drift-tool-changed"), fail("[medium] drift-tool-added: tool x", "drift-tool-added")}}}}
	for _, r := range []Reporter{NewHTML(nil), NewMarkdown(nil)} {
		var b bytes.Buffer
		if err := r.Report(&b, run); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "failed assertion") || !strings.Contains(b.String(), "2 security findings") {
			t.Errorf("%T: audit findings not called security findings", r)
		}
	}
}
