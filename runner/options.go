package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/transport"
)

// Options configures a [Runner]. A nil *Options means the defaults: one test at a time, no
// rate limit, no filters, servers dialed from their collection definition.
type Options struct {
	// Vars, EnvFile and Environment are the --var pairs, the --env-file values and the --env
	// name. Variables are resolved when a collection is loaded: pass the same values to
	// [LoadOptions] (or collection.LoadOptions). The runner records Environment in the run.
	Vars        map[string]string
	EnvFile     map[string]string
	Environment string
	// LookupEnv reads the process environment for {{env.X}} and {{secret.X}} (see
	// [LoadOptions]); nil means none.
	LookupEnv func(string) (string, bool)

	// Tags selects the tests carrying at least one of these tags; Grep the tests whose name or
	// id it matches. Both must hold when both are set. The tests a selected test depends on run
	// too (they are pulled in); the others are left out of the run.
	Tags []string
	Grep *regexp.Regexp

	// Bail stops starting tests after the first failed or errored test; the rest are Skipped
	// and the run is marked Interrupted.
	Bail bool
	// Parallel is how many tests of a collection may run at once (and how many sessions each
	// server may get). Zero or one runs tests one at a time.
	Parallel int
	// RateLimit caps requests to the servers, in calls per second across the run (a token
	// bucket with a burst of one). Zero means no limit.
	RateLimit float64
	// Backoff spaces retries; zero fields take the defaults (1s doubling up to 30s).
	Backoff Backoff
	// UpdateSnapshots makes snapshot assertions (re)write their golden files (--update).
	UpdateSnapshots bool
	// Strict holds servers to the protocol and to their own contracts (--strict):
	//   - an attempt during which its server sent something that answered no request (a
	//     [result.Finding]: a response to an id never issued, a duplicate answer, an unclaimed
	//     malformed frame) fails; without Strict the findings are reported and the test keeps
	//     its verdict;
	//   - every tools/call is checked against the tool's advertised contract: the arguments
	//     against its inputSchema before sending (a mismatch is not sent, unless the test
	//     expects an error: a negative test is sent as written), the
	//     structuredContent against its outputSchema after (a mismatch, or none where an
	//     outputSchema is declared, fails); either is a ProtocolError.
	Strict bool
	// DetectorTime bounds each detector block of a collection (deadlock:, race:,
	// head-of-line:, fuzz:); zero means DefaultDetectorTime.
	DetectorTime time.Duration

	// CallTimeout and ConnectTimeout are the defaults for servers whose collection sets no
	// timeouts.call / timeouts.connect (--timeout, --connect-timeout). Zero means the
	// collection package defaults (25s and 10s).
	CallTimeout    time.Duration
	ConnectTimeout time.Duration
	// ProtocolVersion pins the protocol version of servers whose collection pins none; "" lets
	// the first session of each server detect the era, and later sessions reuse its answer.
	ProtocolVersion string

	// Dial builds the dialer of a server. Nil means [DialServer] with Executable; tests inject
	// in-process servers here.
	Dial DialFunc
	// Executable runs the built-in reference server for `testserver` servers ("" =
	// os.Executable()).
	Executable string
	// MaxMessageSize is the largest message accepted from servers whose collection sets no
	// maxMessageSize, in bytes (0 = 16 MiB, [transport.MaxFrameSize]).
	MaxMessageSize int
	// Abort, when closed, makes closing a stdio server kill its process tree at once instead of
	// shutting it down gracefully (the CLI closes it on a second Ctrl-C).
	Abort <-chan struct{}
	// StderrDir, when set, receives one file per stdio server session holding its stderr; the
	// result's Server.StderrPath points at it and failed tests quote what the server wrote
	// during them. Empty keeps only an in-memory tail.
	StderrDir string

	// OnEvent receives the run's events (see the package documentation). It is called from one
	// goroutine, in order; it should return promptly.
	OnEvent func(result.Event)
	// Step, when set, is asked before each test of a collection starts, with no other test of
	// the collection running (it runs them one at a time): it may read and change the
	// variables, and returns whether to run the test, skip it or abort the run (see
	// [StepAction]). It runs on the scheduler's goroutine and may block (a prompt); it should
	// return when ctx is cancelled. OnEvent has seen every earlier event when Step is called. `mcpspec test --step` prompts on the terminal here.
	Step func(ctx context.Context, next StepInfo) StepAction
	// EventBuffer is how many events may wait for a slow observer before new ones are dropped
	// (default 4096).
	EventBuffer int

	// Git is recorded in the run (the CLI fills it from the work tree).
	Git *result.Git
	// Now is the clock (default time.Now), for deterministic tests.
	Now func() time.Time
}

// Backoff is the wait between attempts of a retried test: Initial, then multiplied by
// Multiplier after each attempt, never above Max.
type Backoff struct {
	Initial    time.Duration
	Multiplier float64
	Max        time.Duration
}

// Default retry backoff: 1s, ×2, up to 30s.
const (
	DefaultBackoffInitial    = time.Second
	DefaultBackoffMultiplier = 2.0
	DefaultBackoffMax        = 30 * time.Second
	// DefaultEventBuffer is how many events wait for a slow observer.
	DefaultEventBuffer = 4096
	// DefaultDetectorTime bounds one detector block.
	DefaultDetectorTime = 10 * time.Minute
)

// Delay returns the wait before attempt n+1 (n counts from 1: the wait after the first attempt).
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	d := float64(b.Initial)
	for i := 1; i < n; i++ {
		d *= b.Multiplier
		if d >= float64(b.Max) {
			return b.Max
		}
	}
	return min(time.Duration(d), b.Max)
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoffInitial
	}
	if b.Multiplier < 1 {
		b.Multiplier = DefaultBackoffMultiplier
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	return b
}

// DialFunc returns the dialer for one server. srv has its variables expanded; stderrPath is the
// file a child process's stderr should go to ("" = none); baseDir is the collection's directory,
// against which a relative working directory is resolved.
type DialFunc func(srv *collection.Server, stderrPath, baseDir string) (transport.Dialer, error)

// withDefaults returns a copy with defaults applied.
func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Parallel < 1 {
		v.Parallel = 1
	}
	if v.CallTimeout <= 0 {
		v.CallTimeout = collection.DefaultCallTimeout
	}
	if v.ConnectTimeout <= 0 {
		v.ConnectTimeout = collection.DefaultConnectTimeout
	}
	if v.EventBuffer <= 0 {
		v.EventBuffer = DefaultEventBuffer
	}
	if v.DetectorTime <= 0 {
		v.DetectorTime = DefaultDetectorTime
	}
	if v.Now == nil {
		v.Now = time.Now
	}
	v.Backoff = v.Backoff.withDefaults()
	if v.Dial == nil {
		exe, maxSize, abort := v.Executable, v.MaxMessageSize, v.Abort
		v.Dial = func(srv *collection.Server, stderrPath, baseDir string) (transport.Dialer, error) {
			d, _, err := DialServer(srv, &DialOptions{Executable: exe, StderrPath: stderrPath, BaseDir: baseDir,
				MaxMessageSize: maxSize, Abort: abort})
			return d, err
		}
	}
	return v
}

// LoadOptions returns the collection load options that carry o's variables, env-file values,
// environment and process environment, so collections are loaded the way the run expects.
func (o *Options) LoadOptions() *collection.LoadOptions {
	if o == nil {
		return &collection.LoadOptions{}
	}
	return &collection.LoadOptions{LookupEnv: o.LookupEnv, Vars: o.Vars, EnvFile: o.EnvFile, Environment: o.Environment}
}

// ErrInterrupted is matched by the error [Runner.Run] returns when ctx was cancelled before
// every test ran; the partial run comes with it.
var ErrInterrupted = errors.New("run interrupted")

// ConnectError is returned by [Runner.Run], with the run, when not one server could be
// connected: no test reached a server.
type ConnectError struct {
	// Servers lists each server that failed, as "collection: server: message".
	Servers []string
}

// Error implements error.
func (e *ConnectError) Error() string {
	if len(e.Servers) == 1 {
		return "no server could be connected: " + e.Servers[0]
	}
	return fmt.Sprintf("no server could be connected (%d failed)", len(e.Servers))
}

// Selects reports whether the filters (Tags, Grep) select t by themselves; the tests a selected
// test depends on run too. A nil *Options selects every test.
func (o *Options) Selects(t *collection.Test) bool {
	if o == nil {
		return true
	}
	if len(o.Tags) > 0 && !slices.ContainsFunc(o.Tags, func(tag string) bool { return slices.Contains(t.Tags, tag) }) {
		return false
	}
	if o.Grep != nil && !o.Grep.MatchString(t.Name) && !o.Grep.MatchString(t.ID) {
		return false
	}
	return true
}
