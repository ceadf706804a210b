package reporters

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpspec/mcpspec/result"
)

// JSON writes the run as one indented JSON document following schema/results.v1.json: the
// [result.Run] fields plus a "summary" object of counts, pass rate and verdict, so a consumer can
// gate on `.summary.ok` without recounting.
type JSON struct{}

// NewJSON returns the JSON reporter; it has no options.
func NewJSON(*Options) *JSON { return &JSON{} }

// Summary is the "summary" member of the JSON report.
type Summary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Skipped int `json:"skipped"`
	// PassRate is passed / (total − skipped) in percent; 0 when nothing ran.
	PassRate float64 `json:"passRate"`
	// OK is true when no test failed or errored.
	OK bool `json:"ok"`
	// Findings counts the findings of every test and collection ([result.Finding]).
	Findings int `json:"findings,omitempty"`
}

// jsonRun is the document: the Run's own fields (flattened) and the summary.
type jsonRun struct {
	*result.Run
	Summary Summary `json:"summary"`
}

// Report implements [Reporter].
func (*JSON) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	r := *run
	if r.SchemaVersion == "" {
		r.SchemaVersion = result.SchemaVersion
	}
	if r.Collections == nil {
		r.Collections = []*result.Collection{}
	}
	c := run.Counts()
	doc := jsonRun{Run: &r, Summary: Summary{
		Total: c.Total, Passed: c.Passed, Failed: c.Failed, Errored: c.Errored, Skipped: c.Skipped,
		PassRate: passRate(c), OK: run.OK(), Findings: run.Findings(),
	}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("json report: %w", err)
	}
	return nil
}
