package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Status is a row's verdict.
type Status string

// The verdicts, from best to worst; NotApplicable sits apart.
const (
	// Pass: the server does what the cited section says.
	Pass Status = "pass"
	// Warn: the server departs from a SHOULD, or from common practice, in a way clients survive.
	Warn Status = "warn"
	// Fail: the server breaks a MUST, crashes, or leaves a request unanswered.
	Fail Status = "fail"
	// NotApplicable: the row does not apply to this server, transport or era.
	NotApplicable Status = "n/a"
)

// Target is what decides whether a row applies: the transport in use, the era under test and
// every era the server speaks.
type Target struct {
	// Transport is the transport the sessions use (stdio, http, sse, ws or tcp; never auto).
	Transport spec.Transport
	// Era is the era under test.
	Era session.Era
	// Eras lists every era the server speaks, in probe order.
	Eras []session.Era
	// Loopback is set for a network server whose URL names a loopback host.
	Loopback bool
}

// stream reports whether the transport carries newline-delimited frames (stdio, TCP).
func (t Target) stream() bool { return t.Transport == spec.Stdio || t.Transport == spec.TCP }

// only reports whether era is the only era the server speaks.
func (t Target) only(era session.Era) bool { return len(t.Eras) == 1 && t.Eras[0] == era }

// Outcome is what a row's check concluded.
type Outcome struct {
	Status  Status
	Message string
}

// Row is one check of the matrix.
type Row struct {
	// ID names the row: "group.check", e.g. "http.session-required".
	ID string
	// Title says what the row checks, in a few words.
	Title string
	// Spec cites what the row checks: the specification, its version and section.
	Spec string
	// Applies reports whether the row applies to a target, and if not why (shown as the n/a
	// reason). Nil applies everywhere.
	Applies func(Target) (bool, string)
	// Once marks a row about the transport alone: it runs in the first era only.
	Once bool
	// Timeout overrides Options.RowTimeout for this row.
	Timeout time.Duration
	// Run performs the check.
	Run func(ctx context.Context, e *Env) Outcome
}

// Evidence is one thing a row sent or received.
type Evidence struct {
	// Dir is "sent", "received" or "note".
	Dir string `json:"dir"`
	// Text is the frame or HTTP exchange, abridged.
	Text string `json:"text"`
}

// Result is one row run in one era.
type Result struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Spec  string `json:"spec"`
	// Era is the era the row ran in; "" for a row about the transport alone.
	Era session.Era `json:"era,omitempty"`
	// Version is the protocol version of that era.
	Version  string        `json:"version,omitempty"`
	Status   Status        `json:"status"`
	Message  string        `json:"message"`
	Evidence []Evidence    `json:"evidence,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// EraInfo says whether the server speaks an era, and at which version.
type EraInfo struct {
	Era     session.Era `json:"era"`
	Version string      `json:"version,omitempty"`
	Spoken  bool        `json:"spoken"`
	// Reason says why an era is not spoken (the answer that showed it).
	Reason string `json:"reason,omitempty"`
}

// Report is a probe run.
type Report struct {
	// Server is the SPEC as the user gave it; Transport the transport in use.
	Server     string                  `json:"server"`
	Transport  spec.Transport          `json:"transport"`
	ServerInfo *session.Implementation `json:"serverInfo,omitempty"`
	Eras       []EraInfo               `json:"eras"`
	Strict     bool                    `json:"strict,omitempty"`
	Results    []Result                `json:"results"`
	Counts     Counts                  `json:"counts"`
	Duration   time.Duration           `json:"durationNs"`
}

// Counts tallies the verdicts of a report.
type Counts struct {
	Pass          int `json:"pass"`
	Warn          int `json:"warn"`
	Fail          int `json:"fail"`
	NotApplicable int `json:"notApplicable"`
}

func (c *Counts) add(s Status) {
	switch s {
	case Pass:
		c.Pass++
	case Warn:
		c.Warn++
	case Fail:
		c.Fail++
	default:
		c.NotApplicable++
	}
}

// Failed reports whether a row failed, or, in a strict report, warned.
func (r *Report) Failed() bool {
	return r.Counts.Fail > 0 || (r.Strict && r.Counts.Warn > 0)
}

// Options configures a probe run.
type Options struct {
	// Server says how to open the server's sessions (see serverconn.Options). Its Session
	// options supply the timeouts and client info; a pinned ProtocolVersion probes that
	// era only. Its OnFrame and OnFinding are called too.
	Server serverconn.Options
	// Header goes with the probe's own HTTP requests (credentials such as Authorization).
	Header http.Header
	// Checks selects rows by id, by group ("http", "http.*") or by glob ("*.session-*");
	// empty runs every row.
	Checks []string
	// Strict makes a warning fail the report (Report.Failed).
	Strict bool
	// SlowTool and SlowArgs name a tool call that runs for a second or more and, ideally,
	// reports progress: the progress and cancellation rows use it. Empty picks one from the
	// tools/list by its name, description and arguments (see [PickSlowTool]).
	SlowTool string
	SlowArgs json.RawMessage
	// RowTimeout bounds each row (default 15s).
	RowTimeout time.Duration
	// Quiet is how long a row waits for an answer that may legitimately never come (default
	// [DefaultQuiet]); the check that the server still answers after a risky request waits
	// twice as long. A shorter wait gives the same verdicts on a server that answers at once.
	Quiet time.Duration
	// HTTPClient sends the HTTP rows' requests; nil uses a client of its own.
	HTTPClient *http.Client
	// OnResult, if set, receives each result as soon as its row ends.
	OnResult func(Result)
	// Progress, when not nil, is told each row as it starts.
	Progress detect.Progress
}

// DefaultRowTimeout bounds a row when Options.RowTimeout is zero.
const DefaultRowTimeout = 15 * time.Second

// DefaultQuiet is Options.Quiet when zero.
const DefaultQuiet = 5 * time.Second

// ErrNoRows is returned when Options.Checks selects no row.
var ErrNoRows = errors.New("probe: no row matches the checks")

// Select returns the rows whose ids match one of checks (an id, a group such as "http" or
// "http.*", or a glob); no checks selects every row. A check that matches nothing is an error
// wrapping [ErrNoRows].
func Select(rows []Row, checks []string) ([]Row, error) {
	if len(checks) == 0 {
		return rows, nil
	}
	var out []Row
	for _, c := range checks {
		n := 0
		for _, r := range rows {
			if matches(c, r.ID) {
				n++
				if !slices.ContainsFunc(out, func(x Row) bool { return x.ID == r.ID }) {
					out = append(out, r)
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: %q", ErrNoRows, c)
		}
	}
	// Keep the table's order, whatever the order of the checks.
	slices.SortStableFunc(out, func(a, b Row) int { return indexOf(rows, a.ID) - indexOf(rows, b.ID) })
	return out, nil
}

func indexOf(rows []Row, id string) int {
	return slices.IndexFunc(rows, func(r Row) bool { return r.ID == id })
}

// matches reports whether check selects id: equal, its group, or a glob.
func matches(check, id string) bool {
	check = strings.TrimSpace(check)
	if check == id || strings.TrimSuffix(check, ".*") == group(id) && (check == group(id) || check == group(id)+".*") {
		return true
	}
	ok, err := path.Match(check, id)
	return err == nil && ok
}

// group is the part of an id before its first dot.
func group(id string) string {
	g, _, _ := strings.Cut(id, ".")
	return g
}

// Run probes the server: it finds the eras the server speaks, then runs the selected rows in
// each. It returns an error only when no session could be opened at all (a *serverconn.Error
// describing the failure) or when Options.Checks selects no row; the report holds whatever ran
// before ctx ended.
func Run(ctx context.Context, o *Options) (*Report, error) {
	opts := o.withDefaults()
	rows, err := Select(Rows(), opts.Checks)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	p := newProber(&opts)
	p.rows = rows
	defer p.close()
	rep := &Report{Server: opts.Server.Info.Spec, Transport: opts.Server.Info.Transport, Strict: opts.Strict, Results: []Result{}}
	opts.Progress.Say("connecting (each era the server speaks)")
	envs, err := p.openEras(ctx, rep)
	if err != nil {
		return rep, err
	}
	// A row about the transport alone runs in the first era only.
	plans := make([][]Row, len(envs))
	ranOnce := map[string]bool{}
	for i := range envs {
		for _, row := range rows {
			if row.Once && ranOnce[row.ID] {
				continue
			}
			ranOnce[row.ID] = true
			plans[i] = append(plans[i], row)
		}
	}
	results := make([][]Result, len(envs))
	side := sideBySide(rep.Transport, envs)
	var wg sync.WaitGroup
	if side {
		// The later eras run in the background, their results held until their turn.
		for i := 1; i < len(envs); i++ {
			wg.Go(func() { results[i] = p.runEra(ctx, envs[i], plans[i], false) })
		}
	}
	for i, e := range envs {
		if side && i > 0 {
			opts.Progress.Say("waiting for the %s, probed alongside", eraName(e.Target.Era))
			continue
		}
		results[i] = p.runEra(ctx, e, plans[i], true)
	}
	wg.Wait()
	for i, rs := range results {
		for _, res := range rs {
			rep.Results = append(rep.Results, res)
			rep.Counts.add(res.Status)
			if opts.OnResult != nil && side && i > 0 {
				opts.OnResult(res)
			}
		}
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// sideBySide reports whether the eras may run at the same time: over stdio each era's sessions
// are processes of their own, so that what a row does to one cannot touch the other. Over the
// network the eras share one server, and a row that crashes it must fail where it ran.
func sideBySide(tr spec.Transport, envs []*Env) bool {
	return tr == spec.Stdio && len(envs) > 1
}

// runEra runs rows in era e, then closes its sessions. A live era reports each row to
// Options.Progress and Options.OnResult as it goes (only one era at a time is live: both are
// called from Run's goroutine).
func (p *prober) runEra(ctx context.Context, e *Env, rows []Row, live bool) []Result {
	defer e.close()
	var out []Result
	for _, row := range rows {
		if ctx.Err() != nil {
			break
		}
		if live {
			p.o.Progress.Say("%s %s: %s", e.Version, row.ID, row.Title)
		}
		res := p.runRow(ctx, e, row)
		out = append(out, res)
		if live && p.o.OnResult != nil {
			p.o.OnResult(res)
		}
	}
	return out
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.RowTimeout <= 0 {
		out.RowTimeout = DefaultRowTimeout
	}
	if out.Quiet <= 0 {
		out.Quiet = DefaultQuiet
	}
	return out
}

// runRow runs one row in env e, with its deadline, and records its evidence.
func (p *prober) runRow(ctx context.Context, e *Env, row Row) Result {
	res := Result{ID: row.ID, Title: row.Title, Spec: row.Spec}
	if !row.Once {
		res.Era, res.Version = e.Target.Era, e.Version
	}
	if row.Applies != nil {
		if ok, why := row.Applies(e.Target); !ok {
			res.Status, res.Message = NotApplicable, why
			return res
		}
	}
	if ea, ok := e.early[row.ID]; ok {
		// The row ran alongside an earlier one, which waited for both at once.
		delete(e.early, row.ID)
		res.Status, res.Message, res.Evidence, res.Duration = ea.out.Status, ea.out.Message, ea.evidence, ea.took
		return res
	}
	limit := row.Timeout
	if limit <= 0 {
		limit = p.o.RowTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rec := e.hub.record()
	start := time.Now()
	out := safeRun(rctx, e, row)
	res.Duration = time.Since(start)
	res.Evidence = e.hub.stop(rec)
	if out.Status == "" {
		out.Status = Pass
	}
	if rctx.Err() != nil && ctx.Err() == nil && out.Status == Pass {
		// A row that ran out of time passed nothing.
		out = Outcome{Fail, fmt.Sprintf("the row did not finish within %s", limit)}
	}
	res.Status, res.Message = out.Status, out.Message
	return res
}

// safeRun runs a row, turning a panic in the row's own code into a failed outcome rather than
// a crash of mcpspec (the rows parse whatever the server sent).
func safeRun(ctx context.Context, e *Env, row Row) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Fail, fmt.Sprintf("probe bug in row %s: %v (please report it)", row.ID, r)}
		}
	}()
	return row.Run(ctx, e)
}
