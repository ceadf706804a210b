package history_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/schematest"
)

// TestOutputsFollowSchema: run.json, the history listing and a trend (as the CLI prints them)
// follow schema/history.v1.json, which refuses what they never hold.
func TestOutputsFollowSchema(t *testing.T) {
	ctx := context.Background()
	sch := schematest.Compile(t, "history.v1.json")
	tmp := t.TempDir()
	root := filepath.Join(tmp, "runs")
	db := open(t, filepath.Join(tmp, "history.db"))
	dirs := sample(t, root)
	for _, d := range dirs {
		if err := db.Index(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	header, err := os.ReadFile(filepath.Join(dirs[4], history.HeaderFile))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := db.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := json.Marshal(struct {
		Runs []history.Run `json:"runs"`
	}{runs})
	points, err := db.Trend(ctx, "main", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	trend, _ := json.Marshal(struct {
		Kind   string          `json:"kind"`
		Branch string          `json:"branch,omitempty"`
		Points []history.Point `json:"points"`
	}{"test", "main", points})
	for name, doc := range map[string][]byte{"run.json": header, "history --json": list, "history trend --json": trend} {
		if err := schematest.Validate(t, sch, doc); err != nil {
			t.Errorf("%s does not follow history.v1.json: %v\n%s", name, err, doc)
		}
	}
	for _, bad := range []string{
		`{"kind":"test","id":"x","started":"2026-01-01T00:00:00Z","durationMs":1,"verdict":"pass","exitCode":0,"extra":1}`,
		`{"kind":"../x","id":"x","started":"2026-01-01T00:00:00Z","durationMs":1,"verdict":"pass","exitCode":0}`,
		`{"runs":[{"kind":"test","id":"x","started":"2026-01-01T00:00:00Z","durationMs":1,"verdict":"pass","exitCode":0}]}`,
		`{"kind":"race","points":[]}`,
	} {
		if schematest.Validate(t, sch, []byte(bad)) == nil {
			t.Errorf("history.v1.json accepts %s", bad)
		}
	}
}
