package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/result"
)

// probeKind is the kind of the tests a `probe:` block adds to a collection's result.
const probeKind = "probe"

// runProbe runs the collection's `probe:` block, if any, after its tests: every row becomes a
// test of kind "probe" — passed, failed (a failed row, or a warning in a strict block) or
// skipped (n/a) — with the row's finding and evidence. A server that cannot be probed makes
// one errored test.
func (cr *colRun) runProbe(ctx context.Context, spec *collection.ProbeSpec) {
	name := spec.Server
	if name == "" {
		name = cr.col.DefaultServer
	}
	if name == "" && len(cr.col.Servers) == 1 {
		for n := range cr.col.Servers {
			name = n
		}
	}
	p := cr.pools[name]
	if p == nil {
		cr.probeError(name, &result.Error{Message: fmt.Sprintf("probe: no server %q to probe", name),
			Hint: "set probe.server to one of the collection's servers"})
		return
	}
	p.once.Do(p.setup)
	if p.setupErr != nil {
		e := *p.setupErr
		cr.probeError(name, &e)
		return
	}
	o := probe.Options{
		Server:     p.connOpts,
		Header:     probeHeader(p.srv),
		Checks:     spec.Checks,
		Strict:     spec.Strict,
		SlowTool:   spec.SlowTool,
		RowTimeout: spec.Timeout,
		OnResult:   func(r probe.Result) { cr.probeRow(name, spec, r) },
	}
	if spec.SlowInput != nil {
		o.SlowArgs, _ = json.Marshal(spec.SlowInput)
	}
	if _, err := probe.Run(ctx, &o); err != nil {
		cr.probeError(name, p.connectFailure(ctx, err))
	}
}

// probeHeader is the header of a network server's definition, for the probe's HTTP requests.
func probeHeader(srv *collection.Server) http.Header {
	if srv == nil || len(srv.Headers) == 0 {
		return nil
	}
	h := http.Header{}
	for k, v := range srv.Headers {
		h.Set(k, v)
	}
	return h
}

// probeRow records one row as a test.
func (cr *colRun) probeRow(server string, spec *collection.ProbeSpec, r probe.Result) {
	id := "probe/" + r.ID
	name := "probe " + r.ID
	if r.Era != "" {
		id += "@" + string(r.Era)
		name += " (" + r.Version + ")"
	}
	rt := &result.Test{ID: id, Name: name, Server: server, Kind: probeKind, Target: r.Spec, Duration: r.Duration}
	att := result.Attempt{Duration: r.Duration}
	switch {
	case r.Status == probe.NotApplicable:
		rt.Status, rt.SkipReason = result.Skipped, "n/a: "+r.Message
	case r.Status == probe.Fail || (r.Status == probe.Warn && spec.Strict):
		rt.Status = result.Failed
		rt.Failures = []result.Failure{{Assertion: "probe", Expected: r.Title, Actual: string(r.Status), Message: r.Message}}
	default:
		rt.Status = result.Passed
	}
	if r.Status == probe.Warn && rt.Status == result.Passed {
		rt.Response = "warning: " + r.Message + "\n"
	}
	rt.Response += evidenceText(r.Evidence)
	if rt.Status != result.Skipped {
		att.Status, att.Failures = rt.Status, rt.Failures
		rt.Attempts = []result.Attempt{att}
	}
	cr.addTests(rt)
}

// probeError records a probe block that could not run as one errored test.
func (cr *colRun) probeError(server string, e *result.Error) {
	cr.addTests(&result.Test{ID: "probe", Name: "probe", Server: server, Kind: probeKind, Status: result.Errored,
		Error: e, Attempts: []result.Attempt{{Status: result.Errored, Error: e}}})
}

// evidenceText renders a row's evidence one item per line: → sent, ← received, · note.
func evidenceText(ev []probe.Evidence) string {
	var b strings.Builder
	for _, e := range ev {
		switch e.Dir {
		case "sent":
			b.WriteString("→ ")
		case "received":
			b.WriteString("← ")
		default:
			b.WriteString("· ")
		}
		b.WriteString(e.Text)
		b.WriteByte('\n')
	}
	return b.String()
}
