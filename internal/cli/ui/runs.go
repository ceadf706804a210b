package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Bounds of a run started from the UI.
const (
	maxRunOutput  = 16 << 20 // stdout kept (a --json document)
	maxRunLog     = 500      // stderr lines kept
	maxProgress   = 3600     // load progress points kept
	maxLoadTime   = 10 * time.Minute
	maxLoadRate   = 10000
	maxDetectTime = "2m"
	maxRuns       = 4 // runs at once
	maxResults    = 32 << 20
)

// runKinds are the verbs a page may start.
func runKinds() []string {
	return []string{"test", "load", "deadlock", "race", "head-of-line", "fuzz", "probe", "audit", "score", "replay"}
}

// runs holds the runs started from the UI.
type runs struct {
	o       Options
	project *project
	events  *broker
	wg      sync.WaitGroup

	// mu guards next, all and stopped.
	mu      sync.Mutex
	next    int
	all     []*run
	stopped bool
}

func newRuns(o Options, p *project, ev *broker) *runs {
	return &runs{o: o, project: p, events: ev}
}

// runRequest is POST /api/runs.
type runRequest struct {
	Kind       string `json:"kind"`
	Collection string `json:"collection,omitempty"`
	// Test, with a collection, runs that test alone (re-run one test).
	Test   string `json:"test,omitempty"`
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Args   string `json:"args,omitempty"`
	// SlowTool and FastTool are head-of-line's pair.
	SlowTool string `json:"slowTool,omitempty"`
	FastTool string `json:"fastTool,omitempty"`
	Rate     string `json:"rate,omitempty"`
	Duration string `json:"duration,omitempty"`
	// Step, with a collection, pauses the run before each test until the page answers.
	Step bool `json:"step,omitempty"`
	// Recording is the name of the project's recording a replay run sends again.
	Recording string `json:"recording,omitempty"`
}

// run is one run: the verb's command line, its live output and its result.
type run struct {
	ID      string
	Kind    string
	Args    []string
	Dir     string // its run directory, when it writes one
	cancel  context.CancelFunc
	events  *broker
	started time.Time
	// stepper answers the pauses of a stepped run (nil otherwise).
	stepper *uiStepper

	// mu guards the fields below.
	mu       sync.Mutex
	ended    time.Time
	done     bool
	exitCode int
	tests    []testLine
	progress []json.RawMessage
	log      []string
	stdout   bytes.Buffer
}

// testLine is one finished test, from the TAP stream.
type testLine struct {
	N    int    `json:"n"`
	OK   bool   `json:"ok"`
	Name string `json:"name"`
	Skip bool   `json:"skip,omitempty"`
}

// runJSON is a run as the page shows it.
type runJSON struct {
	ID       string            `json:"id"`
	Kind     string            `json:"kind"`
	Command  string            `json:"command"`
	Dir      string            `json:"dir,omitempty"`
	Started  time.Time         `json:"started"`
	Ended    *time.Time        `json:"ended,omitempty"`
	Done     bool              `json:"done"`
	ExitCode int               `json:"exitCode"`
	Tests    []testLine        `json:"tests"`
	Progress []json.RawMessage `json:"progress"`
	Log      []string          `json:"log"`
	// Stepped says the run pauses before each test; Paused is the pause it waits at, if any.
	Stepped bool       `json:"stepped,omitempty"`
	Paused  *pauseJSON `json:"paused,omitempty"`
	// Result is the verb's JSON document (stdout, or results.json of a test run).
	Result json.RawMessage `json:"result,omitempty"`
}

func (r *run) view(full bool) runJSON {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := runJSON{ID: r.ID, Kind: r.Kind, Command: spec.Join(append([]string{"mcpspec"}, r.Args...)), Dir: r.Dir,
		Started: r.started, Done: r.done, ExitCode: r.exitCode,
		Tests: slices.Clone(r.tests), Progress: slices.Clone(r.progress), Log: slices.Clone(r.log)}
	if v.Tests == nil {
		v.Tests = []testLine{}
	}
	if v.Progress == nil {
		v.Progress = []json.RawMessage{}
	}
	if v.Log == nil {
		v.Log = []string{}
	}
	if r.done {
		v.Ended = &r.ended
	}
	if full && r.done {
		v.Result = r.result()
	}
	if r.stepper != nil {
		v.Stepped, v.Paused = true, r.stepper.pause()
	}
	return v
}

// result is the run's JSON document, or nil. r.mu is held.
func (r *run) result() json.RawMessage {
	if r.Kind == "test" {
		b, err := regfile.ReadFile(filepath.Join(r.Dir, "results.json"), maxResults)
		if err == nil && json.Valid(b) {
			return b
		}
		return nil
	}
	b := bytes.TrimSpace(r.stdout.Bytes())
	if json.Valid(b) && len(b) > 0 {
		return json.RawMessage(b)
	}
	return nil
}

var tapLine = regexp.MustCompile(`^(not )?ok (\d+)(?: - (.*?))?(?: # (SKIP|skip).*)?$`)

// onStdout sees each line of stdout: a test run's TAP lines become test events.
func (r *run) onStdout(line string) {
	r.mu.Lock()
	if r.stdout.Len()+len(line) < maxRunOutput {
		r.stdout.WriteString(line)
		r.stdout.WriteByte('\n')
	}
	var tl *testLine
	if r.Kind == "test" {
		if m := tapLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			tl = &testLine{N: n, OK: m[1] == "", Name: m[3], Skip: m[4] != ""}
			r.tests = append(r.tests, *tl)
		}
	}
	r.mu.Unlock()
	if tl != nil {
		r.events.publish("run.test", map[string]any{"run": r.ID, "test": tl})
	}
}

// onStderr sees each line of stderr: --progress json lines of a load run become progress
// events, the rest log lines.
func (r *run) onStderr(line string) {
	if r.Kind == "load" && strings.HasPrefix(line, `{"elapsedMs":`) && json.Valid([]byte(line)) {
		p := json.RawMessage(line)
		r.mu.Lock()
		r.progress = append(r.progress, p)
		if len(r.progress) > maxProgress {
			r.progress = r.progress[len(r.progress)-maxProgress:]
		}
		r.mu.Unlock()
		r.events.publish("run.progress", map[string]any{"run": r.ID, "point": p})
		return
	}
	r.mu.Lock()
	r.log = append(r.log, line)
	if len(r.log) > maxRunLog {
		r.log = r.log[len(r.log)-maxRunLog:]
	}
	r.mu.Unlock()
	r.events.publish("run.log", map[string]any{"run": r.ID, "line": line})
}

// start is POST /api/runs: it checks the request, builds the verb's command line and runs it.
func (rs *runs) start(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	if !readJSON(w, r, &req) {
		return
	}
	if rs.o.Exec == nil {
		writeError(w, http.StatusNotImplemented, "this UI cannot start runs")
		return
	}
	rs.mu.Lock()
	running := 0
	for _, x := range rs.all {
		x.mu.Lock()
		if !x.done {
			running++
		}
		x.mu.Unlock()
	}
	stopped := rs.stopped
	rs.next++
	n := rs.next
	rs.mu.Unlock()
	if stopped {
		writeError(w, http.StatusServiceUnavailable, "the UI is stopping")
		return
	}
	if running >= maxRuns {
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%d runs are going on: wait for one to end", maxRuns))
		return
	}
	id := time.Now().UTC().Format("20060102T150405") + "-ui" + strconv.Itoa(n)
	x := &run{ID: id, Kind: req.Kind, events: rs.events, started: time.Now()}
	args, err := rs.command(&req, x)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	x.Args = args
	if req.Step {
		if x.Kind != "test" || rs.o.ExecStep == nil {
			writeError(w, http.StatusBadRequest, "only a collection's run can be stepped, and only by a UI that can run steps")
			return
		}
		x.Args = append(x.Args, "--step")
		wait := rs.o.StepWait
		if wait <= 0 {
			wait = DefaultStepWait
		}
		x.stepper = newStepper(x.ID, rs.events, wait)
	}
	// A test run's reports go into its directory; the load verb makes its own (and would pick
	// another name for one that exists).
	if x.Kind == "test" {
		if err := os.MkdirAll(x.Dir, 0o755); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	rs.mu.Lock()
	rs.all = append(rs.all, x)
	rs.wg.Add(1)
	rs.mu.Unlock()
	rs.events.publish("run.start", x.view(false))
	go func() {
		defer rs.wg.Done()
		defer cancel()
		out, errw := newLineWriter(x.onStdout), newLineWriter(x.onStderr)
		var code int
		if x.stepper != nil {
			code = rs.o.ExecStep(ctx, x.Args, out, errw, x.stepper.step)
		} else {
			code = rs.o.Exec(ctx, x.Args, out, errw)
		}
		out.flush()
		errw.flush()
		x.mu.Lock()
		x.done, x.exitCode, x.ended = true, code, time.Now()
		x.mu.Unlock()
		rs.events.publish("run.done", map[string]any{"run": x.ID, "exitCode": code})
	}()
	writeJSON(w, http.StatusAccepted, x.view(false))
}

// command builds the verb's arguments from a request, refusing servers and collections that
// are not the project's.
func (rs *runs) command(req *runRequest, x *run) ([]string, error) {
	if !slices.Contains(runKinds(), req.Kind) {
		return nil, fmt.Errorf("unknown run kind %q: use one of %s", req.Kind, strings.Join(runKinds(), ", "))
	}
	var col string
	if req.Collection != "" {
		c, ok := rs.project.collection(req.Collection)
		if !ok {
			return nil, fmt.Errorf("collection %q is not one of this project's", req.Collection)
		}
		col = filepath.Join(rs.project.dir, filepath.FromSlash(c.Path))
	}
	if req.Server != "" && !rs.project.allowed(req.Server) {
		return nil, fmt.Errorf("server %q is not in this project's collections nor in the --allow file", req.Server)
	}
	runsDir := filepath.Join(rs.project.dir, ".mcpspec", "runs")
	switch req.Kind {
	case "test":
		if col == "" {
			return nil, fmt.Errorf("a test run needs a collection")
		}
		x.Dir = filepath.Join(runsDir, "test", x.ID)
		args := []string{"test", col, "--reporter", "tap", "--reporter", "json=" + filepath.Join(x.Dir, "results.json"),
			"--reporter", "html=" + filepath.Join(x.Dir, "report.html")}
		if req.Test != "" {
			args = append(args, "--grep", "^"+regexp.QuoteMeta(req.Test)+"$")
		}
		return args, nil
	case "load":
		d, err := time.ParseDuration(orDefault(req.Duration, "5s"))
		if err != nil || d <= 0 || d > maxLoadTime {
			return nil, fmt.Errorf("duration %q: give one between 1s and %s", req.Duration, maxLoadTime)
		}
		rate, err := strconv.ParseFloat(strings.TrimSuffix(orDefault(req.Rate, "20"), "/s"), 64)
		if err != nil || rate <= 0 || rate > maxLoadRate {
			return nil, fmt.Errorf("rate %q: give a number of calls per second up to %d", req.Rate, maxLoadRate)
		}
		x.Dir = filepath.Join(rs.project.dir, "runs", x.ID)
		args := []string{"load", "--rate", strconv.FormatFloat(rate, 'f', -1, 64), "--duration", d.String(),
			"--progress", "json", "--json", "--out", filepath.Join(rs.project.dir, "runs"), "--run-id", x.ID}
		switch {
		case col != "":
			args = append(args, "--collection", col)
		case req.Server != "" && req.Tool != "":
			args = append(args, "--server", req.Server, "--tool", req.Tool, "--args", orDefault(req.Args, "{}"))
		default:
			return nil, fmt.Errorf("a load run needs a collection, or a server and a tool")
		}
		return args, nil
	}
	if req.Server == "" {
		return nil, fmt.Errorf("a %s run needs a server", req.Kind)
	}
	if req.Kind == "replay" {
		if !recording.ValidName(req.Recording) {
			return nil, fmt.Errorf("a replay run needs the name of one of this project's recordings, not %q", req.Recording)
		}
		return []string{"record", "replay", req.Recording, "--server", req.Server, "--json", "--dir", rs.project.recordingsDir()}, nil
	}
	args := []string{req.Kind, "--server", req.Server, "--json"}
	switch req.Kind {
	case "race":
		if req.Tool == "" {
			return nil, fmt.Errorf("a race run needs a tool")
		}
		args = append(args, "--tool", req.Tool, "--max-time", maxDetectTime)
	case "deadlock":
		if req.Tool != "" {
			args = append(args, "--tool", req.Tool)
		}
		args = append(args, "--max-time", maxDetectTime)
	case "head-of-line":
		if req.SlowTool == "" || req.FastTool == "" {
			return nil, fmt.Errorf("a head-of-line run needs a slow tool and a fast tool")
		}
		args = append(args, "--slow-tool", req.SlowTool, "--fast-tool", req.FastTool, "--max-time", maxDetectTime)
	case "fuzz":
		if req.Tool != "" {
			args = append(args, "--tool", req.Tool)
		}
		args = append(args, "--time", maxDetectTime)
	}
	return args, nil
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return strings.TrimSpace(s)
}

func (rs *runs) find(w http.ResponseWriter, r *http.Request) (*run, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, x := range rs.all {
		if x.ID == r.PathValue("id") {
			return x, true
		}
	}
	writeError(w, http.StatusNotFound, "no run "+r.PathValue("id"))
	return nil, false
}

func (rs *runs) list(w http.ResponseWriter, _ *http.Request) {
	rs.mu.Lock()
	all := slices.Clone(rs.all)
	rs.mu.Unlock()
	out := make([]runJSON, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		out = append(out, all[i].view(false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (rs *runs) get(w http.ResponseWriter, r *http.Request) {
	if x, ok := rs.find(w, r); ok {
		writeJSON(w, http.StatusOK, x.view(true))
	}
}

func (rs *runs) cancel(w http.ResponseWriter, r *http.Request) {
	if x, ok := rs.find(w, r); ok {
		x.cancel()
		writeJSON(w, http.StatusOK, x.view(false))
	}
}

// stop interrupts every run and waits for them (their verbs flush partial results).
func (rs *runs) stop() {
	rs.mu.Lock()
	rs.stopped = true
	all := slices.Clone(rs.all)
	rs.mu.Unlock()
	for _, x := range all {
		x.cancel()
	}
	rs.wg.Wait()
}

// lineWriter calls fn with each complete line written to it (without the newline); a line
// longer than maxLine is cut. It is safe for concurrent use.
type lineWriter struct {
	fn func(string)
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
}

const maxLine = 1 << 20

func newLineWriter(fn func(string)) *lineWriter { return &lineWriter{fn: fn} }

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			if len(l.buf) > maxLine {
				l.fn(string(l.buf[:maxLine]))
				l.buf = l.buf[:0]
			}
			return len(p), nil
		}
		l.fn(strings.TrimSuffix(string(l.buf[:i]), "\r"))
		l.buf = l.buf[i+1:]
	}
}

func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.fn(string(l.buf))
		l.buf = nil
	}
}
