package report

import (
	"bytes"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/analysis"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/session"
)

// sampleRun is a spike run with errors, resource samples, a leak verdict and a violated
// threshold, and a server spec that tries to inject markup.
func sampleRun(t *testing.T) *metrics.Run {
	t.Helper()
	st := metrics.NewState([]metrics.Op{{Name: "echo", Kind: metrics.KindTool}, {Name: "add <b>", Kind: metrics.KindTool}})
	for i := range 3000 {
		done := time.Duration(i) * 10 * time.Millisecond
		lat := time.Millisecond + time.Duration(i%7)*time.Millisecond
		if i >= 1000 && i < 1500 {
			lat = 200 * time.Millisecond
		}
		s := metrics.Sample{Op: int32(i % 2), Intended: done - lat, Sent: done - lat/2, Done: done}
		if i%97 == 0 {
			s.Category, s.Msg = session.Timeout, "no answer within 30s <script>alert(1)</script>"
		}
		st.Add(&s)
	}
	run := &metrics.Run{RunID: "r<1>", StartedAt: time.Date(2026, 5, 10, 7, 30, 0, 0, time.UTC), DurationSecs: 30,
		Scenario: metrics.Scenario{Kind: "spike", Model: "open", Rate: 100, MaxInFlight: 1000, SessionMode: "shared",
			Stages: []metrics.StageSpec{{Name: "baseline", DurationSecs: 10, Target: 100}, {Name: "spike", DurationSecs: 5, Target: 1000}, {Name: "recovery", DurationSecs: 15, Target: 100}}},
		Server: metrics.Server{Spec: `python -m srv "<script>alert(1)</script>"`, Transport: "stdio"},
	}
	var samples []metrics.ResourceSample
	for i := range 30 {
		samples = append(samples, metrics.ResourceSample{T: float64(i), RSSMB: 40 + 0.5*float64(i), CPUPct: 10, Calls: int64(i * 100)})
	}
	run.Process = &metrics.Process{PeakRSSMB: 54.5, FinalRSSMB: 54.5, AvgCPUPct: 10, Samples: samples}
	run.Leak = &metrics.Leak{Verdict: "leak", SlopeMBPerSec: 0.5, InterceptMB: 40, R2: 0.99, KBPerCall: 5.12, WarmupSecs: 5, Samples: 25,
		Reason: "memory grows steadily by 0.5 MiB/s (R² 0.99), 15.0 MiB over 30s"}
	run.Sampling = &metrics.Sampling{Source: "process tree of pid 4242", IntervalSecs: 1, Failures: 2, LastError: "deadline exceeded"}
	if err := metrics.Derive(run, st); err != nil {
		t.Fatal(err)
	}
	analysis.Analyze(run, analysis.Options{})
	ths, _ := threshold.ParseAll([]string{"p99<=50ms", "error_rate<=5%"})
	threshold.Evaluate(run, ths)
	return run
}

func TestHTML(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, sampleRun(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<span class="verdict fail">FAIL</span>`, `Latency over time`, `Throughput (requests finished per second)`,
		`Server RSS (MB)`, `fit: leak, R² 0.99`, `warm-up ends`, `&lt;script&gt;alert(1)&lt;/script&gt;`, `add &lt;b&gt;`,
		`>violated<`, `recovery`, `After the spike, p99 came back`,
		`process tree of pid 4242, every 1 s; 2 readings failed (last: deadline exceeded)`, `— memory grows steadily by 0.5 MiB/s`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page, `<svg class="chart"`); n != 4 {
		t.Errorf("%d charts, want 4", n)
	}
	if strings.Contains(page, "<script") {
		t.Error("report.html holds a script element: escaping failed")
	}
	if strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("report.html refers to an outside resource")
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, sampleRun(t)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"# Load run r&lt;1&gt;", "**Status:** ❌ FAIL (1 threshold violation)", "## Latency", "| from intended send |",
		"## Stages", "## Errors", "| Timeout | 31 |", "## Process", "Leak analysis: **leak**", "- ❌ **p99**: expected <=50ms", "## Trace",
		"Sampled: process tree of pid 4242, every 1s; 2 readings failed (last: deadline exceeded)", "KB per request): memory grows steadily"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q\n%s", want, md)
		}
	}
}

// A long reason for not sampling is wrapped under a short title, not clipped at the chart's edge.
func TestNotSampledWraps(t *testing.T) {
	run := sampleRun(t)
	run.Process, run.Leak = nil, nil
	why := "a cold start opens a new server for every session, none lasts to be sampled (a remote server: give --server-pid, --cgroup or --metrics-url)"
	run.Sampling = &metrics.Sampling{Off: why}
	svg := rssChart(run).svg()
	texts := regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	var note []string
	for i, m := range texts {
		text := html.UnescapeString(m[1])
		if n := len([]rune(text)); n > noteChars {
			t.Errorf("line of %d characters would be clipped: %q", n, text)
		}
		if i > 0 {
			note = append(note, text)
		}
	}
	if len(texts) < 3 || html.UnescapeString(texts[0][1]) != "Server RSS: not sampled" {
		t.Fatalf("want a short title and the reason over several lines, got %q", texts)
	}
	if got := strings.Join(note, " "); got != "Not sampled: "+why {
		t.Errorf("reason = %q", got)
	}
}

// TestMarkdownEscapesServerText: a server's error text (and an operation name it chose) opens
// no link, image or HTML element in report.md, and no table cell: a Markdown viewer shows it as
// the text it is.
func TestMarkdownEscapesServerText(t *testing.T) {
	const hostile = "denied [click to re-authenticate](https://evil.example/login) ![x](https://evil.example/pixel.png) <img src=x onerror=alert(1)> `code` | cell\n# heading"
	st := metrics.NewState([]metrics.Op{{Name: "op](https://evil.example)", Kind: metrics.KindTool}})
	for i := range 10 {
		s := metrics.Sample{Op: 0, Intended: time.Duration(i) * time.Millisecond, Sent: time.Duration(i) * time.Millisecond, Done: time.Duration(i+1) * time.Millisecond}
		s.Category, s.Msg = session.ServerError, hostile
		st.Add(&s)
	}
	run := &metrics.Run{RunID: "r1", DurationSecs: 1, Scenario: metrics.Scenario{Kind: "constant", Model: "closed", Concurrent: 1},
		Server: metrics.Server{Spec: "srv `x` [a](https://evil.example)", Transport: "stdio"}}
	if err := metrics.Derive(run, st); err != nil {
		t.Fatal(err)
	}
	analysis.Analyze(run, analysis.Options{})
	var b bytes.Buffer
	if err := Markdown(&b, run); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, `\[click to re-authenticate\](https://evil.example/login)`) {
		t.Errorf("report.md lacks the error text, escaped:\n%s", md)
	}
	// What a viewer would parse: each line with its backslash escapes taken out.
	unescaped := regexp.MustCompile(`\\.`)
	for _, line := range strings.Split(md, "\n") {
		plain := unescaped.ReplaceAllString(line, "")
		for _, bad := range []string{"](", "<img", "`x`", "`code`"} {
			if strings.Contains(plain, bad) {
				t.Errorf("report.md renders %q from the server: %s", bad, line)
			}
		}
		if strings.HasPrefix(line, "# heading") {
			t.Errorf("report.md has the server's heading: %s", line)
		}
	}
}

// A run whose server was not sampled says why, in both reports.
func TestNotSampledSaysWhy(t *testing.T) {
	run := sampleRun(t)
	run.Process, run.Leak = nil, nil
	run.Sampling = &metrics.Sampling{Off: "the server is remote: give --server-pid, --cgroup or --metrics-url"}
	analysis.Analyze(run, analysis.Options{})
	var h, m bytes.Buffer
	if err := HTML(&h, run); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&m, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">Server RSS: not sampled</text>", "Not sampled: the server is remote: give --server-pid, --cgroup or --metrics-url",
		"off: the server is remote", "The server&#39;s resources were not sampled: the server is remote"} {
		if !strings.Contains(h.String(), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, want := range []string{"Not sampled: the server is remote: give --server-pid, --cgroup or --metrics-url.", "> The server's resources were not sampled"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("report.md lacks %q\n%s", want, m.String())
		}
	}
}

// TestHTMLInHeadlessChromium renders the report in a real browser: it must load without a
// console error and draw its charts. Skipped without chromium unless MCPSPEC_CONSUMERS=1.
func TestHTMLInHeadlessChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("MCPSPEC_CONSUMERS") == "1" {
			t.Fatalf("chromium is required when MCPSPEC_CONSUMERS=1: %v", err)
		}
		t.Skip("chromium not installed; set MCPSPEC_CONSUMERS=1 to require it")
	}
	var b bytes.Buffer
	if err := HTML(&b, sampleRun(t)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync"}
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, chromium, append(append([]string{}, base...), args...)...)
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	png := filepath.Join(dir, "shot.png")
	logs := run("--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--screenshot="+png, "--window-size=1000,2400", "file://"+page)
	img, err := os.ReadFile(png)
	if err != nil || len(img) < 30_000 || !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Fatalf("no screenshot (%d bytes, %v)", len(img), err)
	}
	for _, l := range strings.Split(logs, "\n") {
		if (strings.Contains(l, "CONSOLE") || strings.Contains(l, "Refused to") || strings.Contains(l, "Uncaught")) &&
			strings.Contains(l, "file://") {
			t.Errorf("console problem: %s", l)
		}
	}
	dom := run("--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	if n := strings.Count(dom, "<polyline"); n < 6 {
		t.Errorf("rendered DOM has %d polylines, want the chart lines", n)
	}
	if !strings.Contains(dom, `id="summary"`) || !strings.Contains(dom, "<rect") {
		t.Error("rendered DOM lacks the summary or the throughput bars")
	}
}
