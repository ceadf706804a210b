package baseline

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/result"
)

// everyClass is a baseline/current pair with one change of every kind.
func everyClass() (*result.Run, *result.Run) {
	P, F, E := result.Passed, result.Failed, result.Errored
	base := runOf(tst("reg", P, 10*ms), tst("fix", F, 10*ms), tst("chg", F), tst("slow", P, many(5, 10*ms, 12*ms)...),
		tst("fast", P, many(5, 80*ms)...), tst("gone", P, 5*ms), tst("same", P, 10*ms))
	base.ID, base.Git = "base-run", &result.Git{Branch: "main", Commit: "1111111111111111"}
	base.Collections[0].Tools = map[string][]result.Tool{"srv": {
		tool("echo", obj, ""), tool("add", `{"type":"object","properties":{"a":{"type":"number"}}}`, ""), tool("old", "", ""),
	}}
	cur := runOf(tst("reg", F, 10*ms), tst("fix", P, 10*ms), tst("chg", E), tst("slow", P, many(5, 10*ms, 40*ms)...),
		tst("fast", P, many(5, 20*ms)...), tst("same", P, 11*ms), tst("new <b>|*", P, 1*ms))
	cur.ID, cur.Git = "cur-run", &result.Git{Branch: "feature/x", Commit: "2222222222222222"}
	cur.Collections[0].Tools = map[string][]result.Tool{"srv": {
		tool("echo", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text","lang"]}`, ""),
		tool("add", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`, ""),
		tool("fresh", "", ""),
	}}
	return base, cur
}

func TestRenderGolden(t *testing.T) {
	base, cur := everyClass()
	d := Compare(base, cur, nil)
	same := Compare(base, base, nil)
	for _, tc := range []struct {
		file  string
		write func(*Diff, *bytes.Buffer) error
		diff  *Diff
	}{
		{"diff.txt.golden", func(d *Diff, b *bytes.Buffer) error { return d.WriteText(b) }, d},
		{"diff.md.golden", func(d *Diff, b *bytes.Buffer) error { return d.WriteMarkdown(b) }, d},
		{"diff.json.golden", func(d *Diff, b *bytes.Buffer) error { return d.WriteJSON(b) }, d},
		{"nochange.txt.golden", func(d *Diff, b *bytes.Buffer) error { return d.WriteText(b) }, same},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(tc.diff, &buf); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tc.file), buf.Bytes())
		})
	}
}

func TestEveryClassSummary(t *testing.T) {
	base, cur := everyClass()
	d := Compare(base, cur, nil)
	want := map[Kind]int{Regressed: 1, Slower: 1, Removed: 1, Breaking: 1}
	if diff := cmp.Diff(want, d.Regressions()); diff != "" {
		t.Errorf("Regressions (-want +got):\n%s", diff)
	}
	kinds := map[Kind]bool{}
	for _, c := range d.Tests {
		kinds[c.Kind] = true
	}
	for _, c := range d.Latency {
		kinds[c.Kind] = true
	}
	for _, c := range d.Tools {
		kinds[c.Kind] = true
	}
	for _, k := range []Kind{Regressed, Fixed, Changed, Added, Removed, Slower, Faster, Breaking, Compatible} {
		if !kinds[k] {
			t.Errorf("fixture lacks a %s change", k)
		}
	}
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Regressed bool `json:"regressed"`
		Tests     []TestChange
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || !back.Regressed || len(back.Tests) != len(d.Tests) {
		t.Errorf("JSON does not decode back: %v %+v", err, back)
	}
	var md bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "<b>") || !strings.Contains(md.String(), `new &lt;b&gt;\|\*`) {
		t.Error("markdown does not escape test names")
	}
}

func TestDiffJSONFollowsSchema(t *testing.T) {
	sch := schematest.Compile(t, "compare.v1.json")
	base, cur := everyClass()
	reviewed := Compare(
		withTools(map[string][]result.Tool{"s": {tool("geo", `{"type":"object","properties":{"at":{"$ref":"https://example.com/a.json"}}}`, "")}}),
		withTools(map[string][]result.Tool{"s": {tool("geo", `{"type":"object","properties":{"at":{"$ref":"https://example.com/b.json"}}}`, "")}}), nil)
	for name, d := range map[string]*Diff{"every-class": Compare(base, cur, nil), "review": reviewed, "no-change": Compare(base, base, nil), "empty-runs": Compare(runOf(), runOf(), nil)} {
		var buf bytes.Buffer
		if err := d.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if err := schematest.Validate(t, sch, buf.Bytes()); err != nil {
			t.Errorf("%s: diff JSON does not follow compare.v1.json: %v", name, err)
		}
	}
}

func TestRenderReview(t *testing.T) {
	base := withTools(map[string][]result.Tool{"s": {tool("geo", `{"type":"object","properties":{"at":{"$ref":"https://example.com/a.json"}}}`, "")}})
	cur := withTools(map[string][]result.Tool{"s": {tool("geo", `{"type":"object","properties":{"at":{"$ref":"https://example.com/b.json"}}}`, "")}})
	d := Compare(base, cur, nil)
	if d.Regressed() {
		t.Fatalf("a change left for review is not a regression: %+v", d.Tools)
	}
	if len(d.Tools) != 1 || len(d.Tools[0].Changes) != 1 || !d.Tools[0].Changes[0].Review() {
		t.Fatalf("want one change for review, got %+v", d.Tools)
	}
	var txt, md bytes.Buffer
	if err := d.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tool s/geo changed: nothing breaking found, 1 change left to review",
		`review input at: before: $ref "https://example.com/a.json" is remote; now: $ref "https://example.com/b.json" is remote (not analysed; review)`,
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if !strings.Contains(md.String(), "review input at: before:") {
		t.Errorf("markdown lacks the review tag:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tools []struct {
			Changes []map[string]any `json:"changes"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tools) != 1 || len(doc.Tools[0].Changes) != 1 || doc.Tools[0].Changes[0]["review"] != true || doc.Tools[0].Changes[0]["breaking"] != false {
		t.Errorf("JSON change lacks review: true:\n%s", js.String())
	}
	// Decided changes carry no review key.
	base2, cur2 := everyClass()
	js.Reset()
	if err := Compare(base2, cur2, nil).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js.String(), `"review"`) {
		t.Errorf("decided changes must not carry review:\n%s", js.String())
	}
}
