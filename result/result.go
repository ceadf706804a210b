package result

import (
	"encoding/json"
	"time"
)

// SchemaVersion identifies the JSON shape of [Run] (schema/results.v1.json).
const SchemaVersion = "1"

// Status is the outcome of one test.
type Status string

const (
	// Passed: every assertion held.
	Passed Status = "passed"
	// Failed: an assertion failed (or an expected error did not come).
	Failed Status = "failed"
	// Errored: the test could not be carried out (connection, timeout, crash …).
	Errored Status = "error"
	// Skipped: filtered out, or a dependency did not pass, or the run was interrupted first, or
	// the server could not be reached (an earlier test reported why).
	Skipped Status = "skipped"
)

// Run is one execution of one or more collections.
type Run struct {
	SchemaVersion string        `json:"schemaVersion"`
	ID            string        `json:"id"`
	StartedAt     time.Time     `json:"startedAt"`
	Duration      time.Duration `json:"durationNs"`
	// Interrupted is set when the run was stopped (Ctrl-C, --bail) before every test ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// BailedAfter names the test whose failure stopped the run under --bail (Interrupted is
	// then set too); empty otherwise.
	BailedAfter string        `json:"bailedAfter,omitempty"`
	Environment string        `json:"environment,omitempty"`
	Git         *Git          `json:"git,omitempty"`
	Collections []*Collection `json:"collections"`
}

// Git records where the run came from, for baselines per branch.
type Git struct {
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// Collection is the result of one collection file.
type Collection struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	// Servers lists each server the collection used, as connected.
	Servers   []Server      `json:"servers,omitempty"`
	StartedAt time.Time     `json:"startedAt"`
	Duration  time.Duration `json:"durationNs"`
	Tests     []*Test       `json:"tests"`
	// Tools is the tools/list snapshot per server name, for baseline schema diffs.
	Tools map[string][]Tool `json:"tools,omitempty"`
	// Findings are what servers sent after the last test on their session ended that answered
	// no request (see [Finding]); those sent during a test are in its [Test.Findings].
	Findings []Finding `json:"findings,omitempty"`
	// Coverage says which advertised tools, prompts and resources the collection exercised;
	// nil when no server was reached.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Coverage is, per server, which of the tools, prompts and resources it advertised the
// collection's tests and detector blocks exercised (sent a request for).
type Coverage struct {
	Servers []ServerCoverage `json:"servers"`
}

// ServerCoverage is one server's coverage. A kind is nil when the server does not offer it
// (no such capability) or its listing failed.
type ServerCoverage struct {
	Server string        `json:"server"`
	Tools  *KindCoverage `json:"tools,omitempty"`
	// Prompts are exercised by prompts/get.
	Prompts *KindCoverage `json:"prompts,omitempty"`
	// Resources count static resources (by URI) and resource templates (by URI template; a
	// read of a URI the template matches exercises it).
	Resources *KindCoverage `json:"resources,omitempty"`
}

// KindCoverage is the coverage of one kind of item: names (URIs, URI templates) in the
// server's listing order.
type KindCoverage struct {
	Advertised int      `json:"advertised"`
	Exercised  []string `json:"exercised"`
	Missed     []string `json:"missed"`
}

// Totals counts the items exercised and advertised over every server and kind; a nil
// Coverage counts zero.
func (c *Coverage) Totals() (exercised, advertised int) {
	if c == nil {
		return 0, 0
	}
	for _, s := range c.Servers {
		for _, k := range []*KindCoverage{s.Tools, s.Prompts, s.Resources} {
			if k != nil {
				exercised += len(k.Exercised)
				advertised += k.Advertised
			}
		}
	}
	return exercised, advertised
}

// Coverage totals the coverage of every collection: items exercised and advertised.
func (r *Run) Coverage() (exercised, advertised int) {
	for _, c := range r.Collections {
		if c == nil {
			continue
		}
		e, a := c.Coverage.Totals()
		exercised += e
		advertised += a
	}
	return exercised, advertised
}

// Percent is exercised over advertised in percent, 100 when nothing is advertised.
func Percent(exercised, advertised int) float64 {
	if advertised == 0 {
		return 100
	}
	return 100 * float64(exercised) / float64(advertised)
}

// Server describes one connected server.
type Server struct {
	Name            string `json:"name"`
	Transport       string `json:"transport"`
	Target          string `json:"target"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	// StderrPath is where the server's stderr was saved (stdio).
	StderrPath string `json:"stderrPath,omitempty"`
}

// Tool is a tools/list entry kept for schema comparison.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// Test is the result of one test case.
type Test struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Tags     []string      `json:"tags,omitempty"`
	Server   string        `json:"server,omitempty"`
	Kind     string        `json:"kind"` // tool, read, prompt, list, complete, request
	Target   string        `json:"target,omitempty"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"durationNs"`
	// Latency is the wire latency of the final attempt's request.
	Latency time.Duration `json:"latencyNs"`
	// Attempts holds every attempt, the last one deciding Status.
	Attempts []Attempt `json:"attempts"`
	// Failures are the failed assertions of the final attempt.
	Failures []Failure `json:"failures,omitempty"`
	// Error is set when Status is Errored.
	Error *Error `json:"error,omitempty"`
	// SkipReason says why a test was skipped.
	SkipReason string `json:"skipReason,omitempty"`
	// Request and Response are excerpts (secrets masked) of the final attempt.
	Request  string `json:"request,omitempty"`
	Response string `json:"response,omitempty"`
	// Stderr is an excerpt of the server's stderr written during the test, if any.
	Stderr string `json:"stderr,omitempty"`
	// Extracted are the variables this test extracted (secrets masked).
	Extracted map[string]string `json:"extracted,omitempty"`
	// Findings are what the server sent while this test held its session (or, sent between
	// tests, before this one took it) that answered no request: a response to an id never
	// issued, a second answer to one, a malformed frame nobody waited for.
	Findings []Finding `json:"findings,omitempty"`
	// SnapshotsWritten are the snapshot files the test created or changed (--update).
	SnapshotsWritten []string `json:"snapshotsWritten,omitempty"`
	// Messages are the notifications and requests to the client the server sent during the
	// final attempt's step, in order; MessagesDropped counts those left out over the limit.
	Messages        []Message `json:"messages,omitempty"`
	MessagesDropped int       `json:"messagesDropped,omitempty"`
}

// Message is a notification or a request to the client a server sent during a test's step.
type Message struct {
	// Kind is "notification" or "request".
	Kind   string `json:"kind"`
	Method string `json:"method"`
	// Params is an excerpt of the params (secrets masked).
	Params string `json:"params,omitempty"`
	// Reply is an excerpt of the client's answer to a request; Error the JSON-RPC error it
	// answered with instead.
	Reply string `json:"reply,omitempty"`
	Error string `json:"error,omitempty"`
}

// Finding is a message from a server that answered no request — a response with an id never
// issued or no longer pending (a duplicate answer), a malformed frame — classified by the
// session's fault taxonomy. Every report shows it; `mcpspec test --strict` fails its test.
type Finding struct {
	// Server is the collection's name of the server that sent it.
	Server   string   `json:"server,omitempty"`
	Category Category `json:"category"`
	Message  string   `json:"message"`
	// Frame is an excerpt of what the server sent (secrets masked).
	Frame string `json:"frame,omitempty"`
}

// Attempt is one try of a test.
type Attempt struct {
	Status   Status        `json:"status"`
	Duration time.Duration `json:"durationNs"`
	Latency  time.Duration `json:"latencyNs"`
	Failures []Failure     `json:"failures,omitempty"`
	Error    *Error        `json:"error,omitempty"`
}

// Failure is one failed assertion.
type Failure struct {
	// Assertion is the assertion's type ("equals", "expr" …).
	Assertion string `json:"assertion"`
	Path      string `json:"path,omitempty"`
	Expected  string `json:"expected,omitempty"`
	Actual    string `json:"actual,omitempty"`
	Message   string `json:"message"`
	// Line is the collection line of the assertion, when known.
	Line int `json:"line,omitempty"`
}

// Error is a failure to carry out a test, classified by the session's fault taxonomy.
type Error struct {
	Category Category `json:"category"`
	Message  string   `json:"message"`
	Code     int      `json:"code,omitempty"`
	Hint     string   `json:"hint,omitempty"`
}

// Counts tallies test outcomes.
type Counts struct {
	Total, Passed, Failed, Errored, Skipped int
}

// Counts tallies the tests of every collection. Nil collections and tests are skipped, so a
// result read from an untrusted document can be counted.
func (r *Run) Counts() Counts {
	var c Counts
	for _, col := range r.Collections {
		cc := col.Counts()
		c.Total += cc.Total
		c.Passed += cc.Passed
		c.Failed += cc.Failed
		c.Errored += cc.Errored
		c.Skipped += cc.Skipped
	}
	return c
}

// Counts tallies the tests of one collection; a nil Collection counts zero and nil tests are
// skipped.
func (c *Collection) Counts() Counts {
	var n Counts
	if c == nil {
		return n
	}
	for _, t := range c.Tests {
		if t == nil {
			continue
		}
		n.Total++
		switch t.Status {
		case Passed:
			n.Passed++
		case Failed:
			n.Failed++
		case Errored:
			n.Errored++
		case Skipped:
			n.Skipped++
		}
	}
	return n
}

// Findings counts the findings of every test and collection (nil ones skipped).
func (r *Run) Findings() int {
	n := 0
	for _, col := range r.Collections {
		if col == nil {
			continue
		}
		n += len(col.Findings)
		for _, t := range col.Tests {
			if t != nil {
				n += len(t.Findings)
			}
		}
	}
	return n
}

// OK reports whether no test failed or errored.
func (r *Run) OK() bool {
	c := r.Counts()
	return c.Failed == 0 && c.Errored == 0
}
