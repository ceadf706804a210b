package ui_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/internal/cli/ui"
	"github.com/mcpspec/mcpspec/mcptest"
)

// chromium is Debian's browser, which chromedp drives (CI installs it).
const chromium = "/usr/bin/chromium"

// fakeHistory is a run history with one run from yesterday.
type fakeHistory struct{}

func (fakeHistory) Runs(context.Context, ui.HistoryFilter) ([]ui.HistoryRun, error) {
	return []ui.HistoryRun{{ID: "yesterday-1", Kind: "test", Branch: "main", Started: time.Now().Add(-24 * time.Hour),
		Passed: true, Summary: "12 of 12 passed", Dir: ".mcpspec/runs/test/yesterday-1"}}, nil
}

func (fakeHistory) Trend(context.Context, string, string) ([]ui.TrendPoint, error) {
	return []ui.TrendPoint{{RunID: "a", Value: 90}, {RunID: "b", Value: 100}}, nil
}

// eval evaluates expr in the page and decodes its value; a failure ends the test.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// TestBrowser drives the UI in a real headless Chromium, the way a newcomer would: open the
// printed URL, connect to testserver, call a tool, run a collection (failures first, re-run one
// test), step through it, start a 5 s load and watch its chart grow, open history, complete a
// prompt's and a template's arguments, open and replay a recording of the hostile server; then
// connect to a server whose every string is an HTML/script payload and prove that none of it ran. Screenshots go to
// $MCPSPEC_UI_SCREENSHOTS (else a temporary directory).
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no %s: the browser tests need Chromium", chromium)
	}
	if testing.Short() {
		t.Skip("-short: the browser test takes about 15 s")
	}
	mcpspec, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("MCPSPEC_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	// The project: one collection; the UI's runs write under it, as the CLI does in its
	// working directory.
	dir := t.TempDir()
	smoke, err := os.ReadFile(filepath.Join("testdata", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "smoke.yaml"), smoke, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	srv, err := ui.New(ui.Options{Addr: "127.0.0.1:0", Dir: dir, Executable: mcpspec, TempDir: t.TempDir(), History: fakeHistory{},
		Exec: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return int(cli.Run(ctx, append([]string{"mcpspec"}, args...), &cli.IO{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Executable: mcpspec}))
		},
		ExecStep: func(ctx context.Context, args []string, stdout, stderr io.Writer, step ui.StepFunc) int {
			return int(cli.Run(ctx, append([]string{"mcpspec"}, args...), &cli.IO{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Executable: mcpspec, Step: step}))
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()
	defer func() {
		stopServe()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return within 15 s")
		}
	}()

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("no-proxy-server", true))...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// The whole walk through is bounded; each step waits on what the page shows.
	bctx, cancelAll := context.WithTimeout(bctx, 3*time.Minute)
	defer cancelAll()

	shot := func(t *testing.T, name string) {
		t.Helper()
		b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), b, 0o644); err != nil {
			t.Error(err)
		}
	}
	run := func(t *testing.T, name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			shot(t, "failed-"+strings.ReplaceAll(t.Name(), "/", "-"))
			t.Fatalf("%s: %v", name, err)
		}
	}
	// waitJS waits until the expression is true (polling in the page; bounded by bctx).
	waitJS := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second))
	}
	// js is an action that evaluates expr for its effect.
	js := func(expr string) chromedp.Action[chromedp.Void] { return chromedp.Evaluate[chromedp.Void](expr) }
	// clickText clicks the first element matching sel whose text contains text.
	clickText := func(sel, text string) chromedp.Action[chromedp.Void] {
		return js(fmt.Sprintf(`(() => { const e = [...document.querySelectorAll(%q)].find((x) => x.textContent.includes(%q)); if (!e) throw new Error('no ' + %q + ' with ' + %q); e.click(); return true; })()`, sel, text, sel, text))
	}
	// click clicks the element in the page (a synthetic click: the sticky header may cover a
	// button that a mouse event at its centre would miss).
	click := func(sel string) chromedp.Action[chromedp.Void] {
		return js(fmt.Sprintf(`document.querySelector(%q).click()`, sel))
	}
	connect := func(t *testing.T, spec string) {
		run(t, "connect "+spec,
			click(`#nav button[data-page="servers"]`),
			chromedp.SetValue(`#server-spec`, spec),
			js(`window.__sessions = document.querySelectorAll('.session').length`),
			click(`#connect`),
			waitJS(`document.querySelectorAll('.session').length > window.__sessions`))
	}

	t.Run("open", func(t *testing.T) {
		run(t, "open the printed URL", chromedp.Navigate(srv.URL(ln)), waitJS(`document.body.dataset.ready === 'true'`))
		hash := eval[string](t, bctx, `location.hash`)
		title := eval[string](t, bctx, `document.title`)
		if hash != "" || title != "mcpspec ui" {
			t.Errorf("after opening: hash %q (the token should have left the address bar), title %q", hash, title)
		}
	})

	t.Run("connect and call a tool", func(t *testing.T) {
		connect(t, "testserver")
		var text string
		run(t, "the process monitor", waitJS(`!!document.querySelector('.session .process h4')`))
		text = eval[string](t, bctx, `document.querySelector('.session').textContent`)
		for _, want := range []string{"mcptest", "protocol version", "RSS"} {
			if !strings.Contains(text, want) {
				t.Errorf("the session card lacks %q: %q", want, text)
			}
		}
		run(t, "call echo",
			click(`#nav button[data-page="inspector"]`),
			clickText(`#tools-list li`, "echo"),
			chromedp.SetValue(`#tool-form [data-arg="text"]`, "hello from chromium"),
			click(`#call-btn`),
			waitJS(`!!document.querySelector('#call-text')`))
		text = eval[string](t, bctx, `document.querySelector('#call-text').textContent`)
		if text != "hello from chromium" {
			t.Errorf("echo answered %q", text)
		}
		frames := eval[int](t, bctx, `document.querySelectorAll('#call-result .frames tr').length`)
		if frames < 2 {
			t.Errorf("%d raw frames shown, want the request and its answer", frames)
		}
		shot(t, "1-inspector")
	})

	t.Run("run a collection", func(t *testing.T) {
		run(t, "run smoke.yaml",
			click(`#nav button[data-page="collections"]`),
			click(`tr[data-path="smoke.yaml"] .run-btn`),
			waitJS(`!!document.querySelector('#results-table')`))
		statuses := eval[[]string](t, bctx, `[...document.querySelectorAll('#results-table .result-row')].map((r) => r.dataset.status)`)
		if strings.Join(statuses, ",") != "failed,passed,passed" {
			t.Errorf("result rows %v, want the failure first, then two passes", statuses)
		}
		state := eval[string](t, bctx, `document.querySelector('#run-state').textContent`)
		if !strings.HasPrefix(state, "exit 1 (failed)") || !strings.Contains(state, filepath.Join(".mcpspec", "runs", "test")) {
			t.Errorf("run state %q", state)
		}
		shot(t, "2-collection")
		run(t, "re-run one test",
			clickText(`#results-table .result-row`, "Add adds"),
			js(`[...document.querySelectorAll('#results-table .result-row')].find((r) => r.textContent.includes('Add adds')).querySelector('.rerun').click()`),
			waitJS(`!!document.querySelector('#results-table') && document.querySelectorAll('#results-table .result-row').length === 1`))
		state = eval[string](t, bctx, `document.querySelector('#run-state').textContent`)
		if !strings.HasPrefix(state, "exit 0") {
			t.Errorf("re-run state %q", state)
		}
		// The UI's run wrote what the CLI writes.
		results, _ := filepath.Glob(filepath.Join(dir, ".mcpspec", "runs", "test", "*", "results.json"))
		if len(results) != 2 {
			t.Errorf("results.json files %v, want one per run", results)
		}
	})

	t.Run("step through a collection", func(t *testing.T) {
		next := func(want string) chromedp.Action[chromedp.Void] {
			return waitJS(fmt.Sprintf(`(document.querySelector('#step-next')?.textContent || '').endsWith(%q)`, want))
		}
		run(t, "run smoke.yaml stepped",
			click(`#nav button[data-page="collections"]`),
			js(`document.querySelector('#step-toggle').checked = true`),
			click(`tr[data-path="smoke.yaml"] .run-btn`),
			next("Smoke › Echo answers (1 of 3)"))
		vars := eval[[]string](t, bctx, `[...document.querySelectorAll('#step-vars .step-var')].map((r) => r.children[0].textContent + '=' + r.querySelector('input').value)`)
		if strings.Join(vars, " ") != "api_token=•••••• shout=quiet" {
			t.Errorf("variables at the pause %q, want api_token masked and shout=quiet", vars)
		}
		if body := eval[string](t, bctx, `document.body.innerText + [...document.querySelectorAll('input')].map((i) => i.value).join(' ')`); strings.Contains(body, "s3cret") {
			t.Error("the secret's value is on the page")
		}
		shot(t, "2-step-paused")
		run(t, "continue, then skip Add adds",
			click(`#step-continue`), next("Smoke › Add adds (2 of 3)"),
			click(`#step-skip`), next("Smoke › Echo is expected to shout (3 of 3)"))
		// shout becomes LOUD for the last test, which then passes.
		run(t, "set shout and continue",
			js(`[...document.querySelectorAll('#step-vars .step-var')].find((r) => r.children[0].textContent === 'shout').querySelector('input').value = 'LOUD'`),
			js(`[...document.querySelectorAll('#step-vars .step-var')].find((r) => r.children[0].textContent === 'shout').querySelector('.set-var').click()`),
			waitJS(`[...document.querySelectorAll('#step-vars .step-var')].some((r) => r.children[0].textContent === 'shout' && r.querySelector('input').value === 'LOUD' && r.isConnected)`),
			click(`#step-continue`),
			waitJS(`!!document.querySelector('#results-table')`))
		statuses := eval[[]string](t, bctx, `[...document.querySelectorAll('#results-table .result-row')].map((r) => r.dataset.status + ':' + r.children[1].textContent)`)
		state := eval[string](t, bctx, `document.querySelector('#run-state').textContent`)
		if len(statuses) != 3 || !strings.HasPrefix(statuses[0], "skipped:Add adds") || !strings.HasPrefix(statuses[2], "passed:Echo is expected to shout") ||
			!strings.HasPrefix(state, "exit 0") || eval[bool](t, bctx, `!!document.querySelector('#step-next')`) {
			t.Errorf("after stepping: %q, state %q", statuses, state)
		}
		run(t, "untick step", js(`document.querySelector('#step-toggle').checked = false`))
	})

	t.Run("load", func(t *testing.T) {
		run(t, "start a 5 s load",
			click(`#nav button[data-page="load"]`),
			chromedp.SetValue(`#load-server`, "testserver"),
			chromedp.SetValue(`#load-tool`, "echo"),
			chromedp.SetValue(`#load-args`, `{"text":"x"}`),
			chromedp.SetValue(`#load-rate`, "50"),
			chromedp.SetValue(`#load-duration`, "5s"),
			click(`#load-start`),
			waitJS(`Number(document.querySelector('#load-points')?.dataset.count) >= 2`))
		first := eval[int](t, bctx, `Number(document.querySelector('#load-points').dataset.count)`)
		run(t, "the chart moves", waitJS(fmt.Sprintf(`Number(document.querySelector('#load-points').dataset.count) > %d`, first)))
		shot(t, "3-load-running")
		run(t, "the load ends", waitJS(`document.querySelector('#load-state').textContent.startsWith('exit')`))
		last := eval[int](t, bctx, `Number(document.querySelector('#load-points').dataset.count)`)
		var state string
		var coords int
		state = eval[string](t, bctx, `document.querySelector('#load-state').textContent`)
		coords = eval[int](t, bctx, `document.querySelector('#load-charts polyline.series').getAttribute('points').trim().split(' ').length`)
		if !strings.HasPrefix(state, "exit 0") || last <= first || coords != last {
			t.Errorf("load: state %q, points %d then %d, %d chart coordinates", state, first, last, coords)
		}
		if summary := eval[string](t, bctx, `document.querySelector('#load-summary').textContent`); !strings.Contains(summary, "verdictpassed") || strings.Contains(summary, "undefined") {
			t.Errorf("load summary %q", summary)
		}
		runs, _ := filepath.Glob(filepath.Join(dir, "runs", "*"))
		_, shown, _ := strings.Cut(state, " — ")
		if _, err := os.Stat(filepath.Join(shown, "metrics.json")); len(runs) != 1 || err != nil {
			t.Errorf("run directories %v, the page shows %q (%v): want one, with metrics.json", runs, shown, err)
		}
		shot(t, "3-load-done")
	})

	t.Run("detectors and score", func(t *testing.T) {
		for _, c := range []struct{ page, kind, tool, want string }{
			{"detectors", "deadlock", "echo", `"verdict": "clean"`},
			{"analysis", "score", "", `"score": `},
		} {
			box := "#" + c.page
			run(t, c.kind,
				click(`#nav button[data-page="`+c.page+`"]`),
				chromedp.SetValue(box+` select.kind`, c.kind),
				chromedp.SetValue(box+` select.server`, "testserver"),
				js(fmt.Sprintf(`(() => { const t = document.querySelector(%q); if (t) t.value = %q; })()`, box+" input.tool", c.tool)),
				click(box+` button.start`),
				waitJS(`document.querySelector('`+box+` .state-line').textContent.startsWith('exit')`))
			state := eval[string](t, bctx, `document.querySelector('`+box+` .state-line').textContent`)
			report := eval[string](t, bctx, `document.querySelector('`+box+` .report')?.textContent || ''`)
			if !strings.HasPrefix(state, "exit 0") || !strings.Contains(report, c.want) {
				t.Errorf("%s: %q, report %.200q, want %s", c.kind, state, report, c.want)
			}
		}
		shot(t, "4-score")
	})

	t.Run("history", func(t *testing.T) {
		run(t, "open history", click(`#nav button[data-page="history"]`), waitJS(`!!document.querySelector('#history-runs')`))
		text := eval[string](t, bctx, `document.querySelector('#history-runs').textContent`)
		if !strings.Contains(text, "12 of 12 passed") {
			t.Errorf("history shows %q", text)
		}
		shot(t, "4-history-runs")
	})

	t.Run("answer a server request", func(t *testing.T) {
		// confirm asks for an elicitation in the middle of its call; the person answers it on
		// the page while the call waits.
		connect(t, "testserver")
		run(t, "call confirm and answer its elicitation",
			click(`#nav button[data-page="inspector"]`),
			clickText(`#tools-list li`, "confirm"),
			chromedp.SetValue(`#tool-form [data-arg="message"]`, "Ship it?"),
			click(`#call-btn`),
			waitJS(`!!document.querySelector('#asks .ask')`))
		if params := eval[string](t, bctx, `document.querySelector('#asks .ask pre').textContent`); !strings.Contains(params, "Ship it?") {
			t.Errorf("the request shown: %q", params)
		}
		shot(t, "5-ask")
		run(t, "answer",
			chromedp.SetValue(`#asks .ask textarea`, `{"action":"accept","content":{"confirmed":true}}`),
			click(`#asks .ask .answer`),
			waitJS(`!!document.querySelector('#call-text') && !document.querySelector('#asks .ask')`))
		if text := eval[string](t, bctx, `document.querySelector('#call-text').textContent`); text != "confirmed: Ship it?" {
			t.Errorf("confirm answered %q after the elicitation was accepted", text)
		}
	})

	t.Run("completion", func(t *testing.T) {
		// The session of the subtest before is testserver's: greet's name and the item
		// template's id complete (completion/complete) as the person types.
		typeIn := func(sel, text string) chromedp.Action[chromedp.Void] {
			return js(fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = %q; i.dispatchEvent(new Event('input')); })()`, sel, text))
		}
		offered := func(form string) []string {
			return eval[[]string](t, bctx, `[...document.querySelectorAll('`+form+` .completions li')].map((li) => li.textContent)`)
		}
		run(t, "complete greet's name",
			click(`#nav button[data-page="inspector"]`),
			clickText(`#prompts-list li`, "greet"),
			typeIn(`#prompt-form input`, "a"),
			waitJS(`document.querySelectorAll('#prompt-form .completions li').length > 0`))
		if got := offered("#prompt-form"); strings.Join(got, ",") != "Ada,Alan" {
			t.Errorf("greet name completions for %q: %q, want Ada,Alan", "a", got)
		}
		run(t, "narrow it", typeIn(`#prompt-form input`, "ala"),
			waitJS(`document.querySelectorAll('#prompt-form .completions li').length === 1`),
			clickText(`#prompt-form .completions li`, "Alan"))
		if v := eval[string](t, bctx, `document.querySelector('#prompt-form input').value`); v != "Alan" {
			t.Errorf("after picking Alan the input holds %q", v)
		}
		run(t, "complete the item template's id and read it",
			clickText(`#templates-list li`, "mcptest://items/{id}"),
			typeIn(`#template-form [data-arg="id"]`, "4"),
			waitJS(`document.querySelectorAll('#template-form .completions li').length > 0`))
		if got := offered("#template-form"); strings.Join(got, ",") != "42" {
			t.Errorf("item id completions for %q: %q, want 42", "4", got)
		}
		run(t, "read item 42",
			clickText(`#template-form .completions li`, "42"),
			click(`#template-form button[type="submit"]`),
			waitJS(`!!document.querySelector('#call-json')`))
		if text := eval[string](t, bctx, `document.querySelector('#call-json').textContent`); !strings.Contains(text, "mcptest://items/42") {
			t.Errorf("reading the template with id 42: %.300q", text)
		}
		shot(t, "5-completion")
	})

	// inert fails the test if a payload ran or made an element.
	inert := func(t *testing.T) {
		t.Helper()
		pwned := eval[bool](t, bctx, `window.__pwned !== undefined`)
		title := eval[string](t, bctx, `document.title`)
		active := eval[int](t, bctx, `document.querySelectorAll('img, iframe, object, embed, a[href], [onerror], [onload], [onmouseover], script:not([src="/app.js"]), svg script').length`)
		if pwned || title != "mcpspec ui" {
			t.Errorf("a payload ran: window.__pwned set %v, title %q", pwned, title)
		}
		if active != 0 {
			t.Errorf("%d elements from server text were created as HTML", active)
		}
	}

	t.Run("recordings", func(t *testing.T) {
		// A recording of the hostile server, made the CLI's way: its frames carry the payloads.
		var out, errb strings.Builder
		code := cli.Run(bctx, []string{"mcpspec", "record", "start", "hostile", "--server", "testserver --hostile-html"},
			&cli.IO{Stdin: strings.NewReader(`.call html_echo {"text":"x"}` + "\n"), Stdout: &out, Stderr: &errb, Executable: mcpspec})
		// html_echo answers isError: inspect's exit code 1, the recording made all the same.
		if code != 1 || !strings.Contains(errb.String(), "recorded 6 frames") {
			t.Fatalf("record start: exit %d: %s %s", code, out.String(), errb.String())
		}
		run(t, "list the recordings",
			click(`#nav button[data-page="recordings"]`),
			waitJS(`!!document.querySelector('#recordings-table')`))
		row := eval[[]string](t, bctx, `[...document.querySelector('#recordings-table .recording-row').children].map((c) => c.textContent)`)
		if len(row) != 5 || row[0] != "hostile" || row[1] == "0" || row[3] != "testserver --hostile-html" || !strings.HasSuffix(row[4], "KB") {
			t.Errorf("recording row %q, want hostile, its frames, duration, server and size", row)
		}
		run(t, "open it",
			clickText(`#recordings-table button.open-rec`, "hostile"),
			waitJS(`document.querySelectorAll('#recording-frames .rec-frame').length > 0`))
		frames := eval[[]string](t, bctx, `[...document.querySelectorAll('#recording-frames .rec-frame')].map((r) => r.children[0].textContent + ' ' + r.children[1].textContent)`)
		if len(frames) < 6 || !strings.HasPrefix(frames[0], "→ client to server +") || !strings.HasPrefix(frames[1], "← server to client +") {
			t.Errorf("frames %q, want at least 6 with direction and timing", frames)
		}
		if text := eval[string](t, bctx, `document.querySelector('#recording-frames').textContent`); strings.Count(text, "window.__pwned") < 3 {
			t.Errorf("the payloads are not shown as text in the frames: %.300q", text)
		}
		inert(t)
		shot(t, "7-recording")
		// Replayed against the plain testserver: discovery matches, the call of html_echo
		// (a tool the plain server lacks) changes from its HTML answer to "unknown tool".
		run(t, "replay it",
			chromedp.SetValue(`#replay-server`, "testserver"),
			click(`#replay-start`),
			waitJS(`!!document.querySelector('#replay-counts')`))
		counts := eval[string](t, bctx, `document.querySelector('#replay-counts').textContent`)
		statuses := eval[[]string](t, bctx, `[...document.querySelectorAll('#replay-results .replay-row')].map((r) => r.dataset.status)`)
		state := eval[string](t, bctx, `document.querySelector('#replay-state').textContent`)
		if !strings.HasPrefix(state, "exit 1") || counts != "differs: 2 matched, 1 changed, 0 added, 0 removed" ||
			strings.Join(statuses, ",") != "matched,changed,matched" {
			t.Errorf("replay: %q, %q, rows %v", state, counts, statuses)
		}
		inert(t)
		shot(t, "7-replay")
	})

	t.Run("xss", func(t *testing.T) {
		connect(t, "testserver --hostile-html")
		run(t, "show and call every hostile thing",
			click(`#nav button[data-page="inspector"]`),
			clickText(`#tools-list li`, "onerror"),
			click(`#call-btn`),
			waitJS(`!!document.querySelector('#call-error')`),
			js(`document.querySelector('#tool-form select').selectedIndex = 2`),
			clickText(`#tools-list li`, "html_echo"),
			click(`#call-btn`),
			waitJS(`!!document.querySelector('#call-text')`),
			clickText(`#resources-list li`, "hostile.html"),
			waitJS(`!!document.querySelector('#call-text')`),
			clickText(`#nav button`, "Servers"))
		shot(t, "6-xss")
		inert(t)
		text := eval[string](t, bctx, `document.body.textContent`)
		if n := strings.Count(text, mcptest.HostileHTML); n < 3 {
			t.Errorf("the payload appears %d times as text, want it shown (name, description, error, resource)", n)
		}
	})
}
