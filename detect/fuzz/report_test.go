package fuzz

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/result"
)

// sampleReport is a report with one finding of each shape, made without a server.
func sampleReport() *Report {
	r := newReport(&Options{Seed: 7})
	r.FamiliesRun = []mutate.Family{mutate.Schema, mutate.InvalidUTF8, mutate.Batch}
	r.add(&CaseResult{Case: mutate.Case{N: 1, Family: mutate.Schema, Kind: "wrong-type", What: "echo: text: number", Tool: "echo", Args: json.RawMessage(`{"text":5}`)},
		Outcome: Crash, Detail: "exited with status 2", Stderr: "panic: x"})
	r.add(&CaseResult{Case: mutate.Case{N: 2, Family: mutate.InvalidUTF8, Kind: "0xff", What: "invalid UTF-8", Frames: [][]byte{[]byte("{\"jsonrpc\":\"2.0\",\"id\":@ID@,\"method\":\"p\xffing\"}")}},
		Sent: [][]byte{[]byte("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"p\xffing\"}")}, Outcome: Malformed, Detail: "not JSON", Answer: []byte("{\"id\":9,\xff")})
	r.add(&CaseResult{Case: mutate.Case{N: 3, Family: mutate.InvalidUTF8, Kind: "0xff"}, Sent: [][]byte{[]byte("x")}, Outcome: Malformed})
	r.add(&CaseResult{Case: mutate.Case{N: 4, Family: mutate.Batch, Kind: "empty"}, Outcome: Rejected})
	r.StoppedBy = "iterations"
	return r
}

func TestReportCountsAndGroups(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	if r.Cases != 4 || r.Bugs() != 2 || r.Findings[1].Count != 2 || r.Outcomes[Malformed] != 2 {
		t.Errorf("cases %d, bugs %d, counts %+v", r.Cases, r.Bugs(), r.Outcomes)
	}
	if got := string(r.Findings[1].Frames[0]); got != "{\"jsonrpc\":\"2.0\",\"id\":900002,\"method\":\"p\xffing\"}" {
		t.Errorf("the saved frame carries %q, want the finding's saved id", got)
	}
	if s := r.Summary(); !strings.Contains(s, "2 finding(s): crash ×1, malformed ×1") {
		t.Errorf("summary %q", s)
	}
}

func TestTests(t *testing.T) {
	t.Parallel()
	tests := sampleReport().Tests()
	var ids []string
	for _, tt := range tests {
		ids = append(ids, tt.ID+"="+string(tt.Status))
	}
	if got := strings.Join(ids, " "); got != "fuzz-f1=failed fuzz-f2=failed fuzz-batch=passed" {
		t.Errorf("tests %s", got)
	}
	f1 := tests[0]
	if f1.Kind != Kind || f1.Target != "tools/call echo" || f1.Request != `tools/call echo {"text":5}` || f1.Stderr != "panic: x" ||
		f1.Failures[0].Actual != "crash" || len(f1.Attempts) != 1 {
		t.Errorf("F1 %+v", f1)
	}
	if f2 := tests[1]; !strings.HasPrefix(f2.Request, "base64:") || !strings.HasPrefix(f2.Response, "base64:") {
		t.Errorf("bytes that are not UTF-8 must show as base64: %q %q", f2.Request, f2.Response)
	}
	run := sampleReport().Run("srv", time.Unix(1_800_000_000, 0))
	if len(run.Collections) != 1 || run.Collections[0].Name != "fuzz srv" || len(run.Collections[0].Tests) != 3 || run.OK() {
		t.Errorf("run %+v", run.Collections[0])
	}
	if c := run.Counts(); c.Failed != 2 || c.Passed != 1 {
		t.Errorf("counts %+v", c)
	}
	// A family that ran no case is a skipped test, not a passed one.
	r := sampleReport()
	r.FamiliesRun = append(r.FamiliesRun, mutate.DeepNesting)
	last := r.Tests()[3]
	if last.Status != result.Skipped || !strings.Contains(last.SkipReason, "no case of this family") {
		t.Errorf("family without cases: %+v", last)
	}
}

// TestJSONFollowsSchema checks the --json document against schema/fuzz.v1.json.
func TestJSONFollowsSchema(t *testing.T) {
	t.Parallel()
	sch := schematest.Compile(t, "fuzz.v1.json")
	r := sampleReport()
	r.Skipped = []SkippedTool{{"rm", "annotated destructiveHint"}}
	r.Findings[0].ProgressToken, r.Findings[0].AnyInput = true, true
	r.Findings = append(r.Findings, &Finding{ID: "F3", Outcome: Crash, Family: mutate.Schema, Kind: "after-calls", What: "any input", Detail: "d", Case: 5, Count: 3, AfterCalls: 50})
	r.Unconfirmed = append(r.Unconfirmed, &Finding{ID: "U1", Outcome: Malformed, Family: mutate.BadMethod, Kind: "non-string", What: "w", Detail: "d", Case: 6, Count: 1,
		Unconfirmed: true, Frames: [][]byte{[]byte(`{"jsonrpc":"2.0","id":950001,"method":123}`)}, Answer: []byte(`{}`)})
	wrapped := struct {
		*Report
		FindingCount int `json:"findingCount"`
		ExitCode     int `json:"exitCode"`
	}{r, r.Bugs(), 1}
	b, err := json.Marshal(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.Validate(t, sch, b); err != nil {
		t.Fatalf("fuzz JSON does not follow fuzz.v1.json: %v\n%s", err, b)
	}
	var back struct {
		Findings []struct {
			Frames []map[string]string `json:"frames"`
			Answer map[string]string   `json:"answer"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Findings[1].Frames[0]["base64"] == "" || back.Findings[1].Answer["base64"] == "" {
		t.Errorf("bytes in JSON: %s", b)
	}
}
