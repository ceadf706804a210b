package tokens

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/session"
)

func loadInventory(t *testing.T, name string) *inventory.Inventory {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "inventory", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var inv inventory.Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

func TestMeasureHandComputed(t *testing.T) {
	c, err := NewCounter(Cl100kBase)
	if err != nil {
		t.Fatal(err)
	}
	tools := []session.Tool{
		{Name: "small", Raw: json.RawMessage(`{"name":"small","inputSchema":{"type":"object"}}`)},
		{Name: "big", Description: "Reads a file.", Raw: json.RawMessage(`{ "name": "big", "title": "Big",
			"description": "Reads a file.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
			"annotations": {"readOnlyHint": true} }`)},
	}
	r, err := Measure(c, tools)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) int {
		n, err := c.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	big := r.Tools[0]
	if big.Tool != "big" || r.Tools[1].Tool != "small" {
		t.Fatalf("not heaviest first: %s, %s", big.Tool, r.Tools[1].Tool)
	}
	full := `{"name":"big","title":"Big","description":"Reads a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`
	core := `{"name":"big","description":"Reads a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`
	want := Cost{
		Bytes: len(full), Full: count(full), Core: count(core), Name: count("big"), Description: count("Reads a file."),
		Schema: count(`{"type":"object","properties":{"path":{"type":"string"}}}`),
	}
	want.Structure = want.Core - want.Name - want.Description - want.Schema
	want.Extras = want.Full - want.Core
	if diff := cmp.Diff(want, big.Cost); diff != "" {
		t.Errorf("big (-want +got):\n%s", diff)
	}
	wantFields := []FieldCost{{"annotations", count(`"annotations":{"readOnlyHint":true}`)}, {"title", count(`"title":"Big"`)}}
	if diff := cmp.Diff(wantFields, big.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if r.Total.Full != big.Full+r.Tools[1].Full || r.Total.Core != big.Core+r.Tools[1].Core {
		t.Errorf("total %+v", r.Total)
	}
	if w := r.Windows[0]; w.Name != "8k" || w.Full != percent(r.Total.Full, 8192) {
		t.Errorf("window %+v", w)
	}
	if !r.Exact || r.Encoding != Cl100kBase {
		t.Errorf("exact %v encoding %s", r.Exact, r.Encoding)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int
		want        float64
	}{{1, 8192, 0.01}, {4096, 8192, 50}, {1000, 128000, 0.78}, {200000, 200000, 100}, {0, 8192, 0}} {
		if got := percent(c.part, c.whole); got != c.want {
			t.Errorf("percent(%d, %d) = %v, want %v", c.part, c.whole, got, c.want)
		}
	}
}

func TestMeasureRejectsNonObjects(t *testing.T) {
	c, _ := NewCounter("")
	for _, raw := range []string{`[1]`, `"x"`, `{"name":`} {
		if _, err := Measure(c, []session.Tool{{Name: "x", Raw: json.RawMessage(raw)}}); err == nil {
			t.Errorf("%s: no error", raw)
		}
	}
}

// TestReferenceServersGolden renders the reports of the reference servers (text and JSON).
func TestReferenceServersGolden(t *testing.T) {
	for _, name := range []string{"server-everything", "server-filesystem", "server-memory"} {
		t.Run(name, func(t *testing.T) {
			c, _ := NewCounter(O200kBase)
			r, err := Measure(c, loadInventory(t, name).Tools)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := WriteText(&text, r, nil, ""); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".txt"), text.Bytes())
			js, _ := json.MarshalIndent(r, "", "  ")
			golden.Check(t, filepath.Join("testdata", name+".json"), append(js, '\n'))
		})
	}
}

func TestCompare(t *testing.T) {
	before := &Report{Tools: []ToolCost{
		{Tool: "a", Cost: Cost{Full: 10, Core: 8}}, {Tool: "b", Cost: Cost{Full: 20, Core: 15}}, {Tool: "gone", Cost: Cost{Full: 5, Core: 5}},
	}, Total: Cost{Full: 35, Core: 28}}
	after := &Report{Tools: []ToolCost{
		{Tool: "a", Cost: Cost{Full: 10, Core: 8}}, {Tool: "b", Cost: Cost{Full: 50, Core: 15}}, {Tool: "new", Cost: Cost{Full: 7, Core: 6}},
	}, Total: Cost{Full: 67, Core: 29}}
	d := Compare(before, after)
	want := &Diff{FullBefore: 35, FullAfter: 67, CoreBefore: 28, CoreAfter: 29, Changes: []Change{
		{Tool: "b", Status: "changed", FullBefore: 20, FullAfter: 50, CoreBefore: 15, CoreAfter: 15},
		{Tool: "new", Status: "added", FullAfter: 7, CoreAfter: 6},
		{Tool: "gone", Status: "removed", FullBefore: 5, CoreBefore: 5},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var out bytes.Buffer
	if err := WriteText(&out, after, d, "old.json"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Against old.json: full 35 → 67 (+32), core 28 → 29 (+1)", "changed  b: full 20 → 50 (+30)", "removed  gone: full 5 → 0 (-5)"} {
		if !bytes.Contains(out.Bytes(), []byte(s)) {
			t.Errorf("text lacks %q:\n%s", s, out.String())
		}
	}
}

func TestPrintable(t *testing.T) {
	if got := printable("a\tb\u200bc\u202ed"); got != `a\u0009b\u200Bc\u202Ed` {
		t.Errorf("got %q", got)
	}
}
