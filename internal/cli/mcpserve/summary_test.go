package mcpserve

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/result"
)

// TestResultsSummary: the counts, then one line per failed or errored test with its first
// problem; a document that is not a results file is not summarised.
func TestResultsSummary(t *testing.T) {
	run := &result.Run{SchemaVersion: "1", Collections: []*result.Collection{{Name: "c", Tests: []*result.Test{
		{Name: "ok", Status: result.Passed},
		{Name: "wrong text", Status: result.Failed, Failures: []result.Failure{{Assertion: "contains", Message: `text does not contain "hi"`}}},
		{Name: "down", Status: result.Errored, Error: &result.Error{Category: "Crash", Message: "the server exited"}},
		{Name: "later", Status: result.Skipped},
	}}}}
	doc, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := resultsSummary(doc)
	want := "4 tests: 1 passed, 1 failed, 1 errored, 1 skipped\nFAILED wrong text: text does not contain \"hi\"\nERROR down: Crash: the server exited"
	if !ok || got != want {
		t.Errorf("resultsSummary =\n%s\nwant\n%s", got, want)
	}
	if _, ok := resultsSummary([]byte(`{"tools":[]}`)); ok {
		t.Error("a document without collections was summarised")
	}
}

// TestDetectorSummary: each detector's JSON gives its line.
func TestDetectorSummary(t *testing.T) {
	for _, c := range []struct {
		verb, doc, want string
		code            int
	}{
		{"race", `{"verdict":"race"}`, "race: verdict race (exit 1)", 1},
		{"head-of-line", `{"verdict":"serializes","diagnosis":"fast calls wait"}`, "head-of-line: verdict serializes (exit 1)\nfast calls wait", 1},
		{"fuzz", `{"cases":30,"findingCount":1}`, "fuzz: failed (exit 1): 30 cases, 1 finding", 1},
		{"probe", `{"counts":{"pass":64,"warn":0,"fail":0,"notApplicable":48}}`, "probe: ok (exit 0): 64 pass, 0 warn, 0 fail, 48 notApplicable", 0},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.doc), &m); err != nil {
			t.Fatal(err)
		}
		if got := detectorSummary(c.verb, Output{ExitCode: c.code, Outcome: outcome(c.code)}, m); got != c.want {
			t.Errorf("%s: %q, want %q", c.verb, got, c.want)
		}
	}
}

// TestToolResult: a verdict (exit 0, 1, 6, 8) is a result, anything else a tool error; a
// failure's text carries the verb's Error and Hint lines.
func TestToolResult(t *testing.T) {
	for code, isErr := range map[int]bool{0: false, 1: false, 6: false, 8: false, 2: true, 3: true, 4: true, 5: true, 7: true, 130: true} {
		out := Output{ExitCode: code, Outcome: outcome(code), Summary: "s", Stderr: "progress\nError: it broke\nHint: fix it"}
		r := toolResult(out)
		if r.IsError != isErr {
			t.Errorf("exit %d: isError %v, want %v", code, r.IsError, isErr)
		}
		text := r.Content[0].(*mcp.TextContent).Text
		if want := "s\nError: it broke\nHint: fix it"; code != 0 && text != want {
			t.Errorf("exit %d: text %q, want %q", code, text, want)
		}
	}
}

// TestCappedAndTail: capped keeps the head and notes the cut; tail keeps the end.
func TestCappedAndTail(t *testing.T) {
	c := &capped{max: 5}
	tl := &tail{max: 5}
	for _, p := range []string{"abc", "def", "gh"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("capped.Write(%q) = %d, %v", p, n, err)
		}
		_, _ = tl.Write([]byte(p))
	}
	if got := c.buf.String(); got != "abcde" || !c.cut {
		t.Errorf("capped = %q cut=%v, want abcde cut", got, c.cut)
	}
	if got := tl.String(); got != "defgh" {
		t.Errorf("tail = %q, want defgh", got)
	}
}
