package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/internal/schematest"
)

// readMeta reads a metadata file of testdata.
func readMeta(t *testing.T, path string) *Metadata {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := ReadMetadata(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// readExpect reads "rule kind name [file]" lines, '#' comments skipped; "-" is an empty name.
func readExpect(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

func key(f Finding) string {
	name := f.Subject.Name
	if name == "" {
		name = "-"
	}
	return fmt.Sprintf("%s %s %s", f.RuleID, f.Subject.Kind, name)
}

// TestCalibration runs every passive rule over the real metadata of the official reference
// servers: nothing above info may fire except the reviewed true positives in expect.txt.
func TestCalibration(t *testing.T) {
	files, err := filepath.Glob("testdata/calibration/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("calibration corpus: %v files (%v)", len(files), err)
	}
	var got []string
	tools := 0
	for _, path := range files {
		m := readMeta(t, path)
		tools += len(m.Tools)
		rep := mustRun(t, []*Metadata{m}, nil)
		for _, f := range rep.Findings {
			if f.Severity > Info {
				got = append(got, filepath.Base(path)+" "+key(f))
				t.Logf("%s: [%s] %s: %s", filepath.Base(path), f.Severity, f.RuleID, f.Message)
			}
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(readExpect(t, "testdata/calibration/expect.txt"), got); diff != "" {
		t.Errorf("findings above info on benign servers (-want +got):\n%s", diff)
	}
	t.Logf("%d tools in %d servers", tools, len(files))
}

// poisonedLock builds the lockfile of an earlier, reviewed version of the poisoned server:
// add had a benign description, calculate had no notes property, fetch_url was fetch_page,
// legacy_export existed, ring_bell did not, the instructions were harmless.
func poisonedLock(t *testing.T, m *Metadata) *Lock {
	t.Helper()
	before := *m
	before.Instructions = "This server helps with files."
	before.Tools = nil
	for _, raw := range m.Tools {
		var tool map[string]any
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatal(err)
		}
		switch tool["name"] {
		case "ring_bell":
			continue
		case "add":
			tool["description"] = "Adds two numbers."
		case "calculate":
			delete(tool["inputSchema"].(map[string]any)["properties"].(map[string]any), "notes")
		case "fetch_url":
			tool["name"] = "fetch_page"
		}
		b, _ := json.Marshal(tool)
		before.Tools = append(before.Tools, b)
	}
	before.Tools = append(before.Tools, json.RawMessage(`{"name":"legacy_export","description":"Exports everything.","inputSchema":{"type":"object"}}`))
	l := &Lock{}
	l.Set(&before)
	return l
}

// auditPoisoned runs the whole poisoned corpus as the CLI would.
func auditPoisoned(t *testing.T) *Report {
	t.Helper()
	m := readMeta(t, "testdata/poisoned/poisoned.json")
	other := readMeta(t, "testdata/poisoned/other-server.json")
	lockPath := "testdata/poisoned/tools.lock"
	if golden.Update() {
		var b bytes.Buffer
		if err := WriteLock(&b, poisonedLock(t, m)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(lockPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := ReadLock(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sf, err := os.Open("testdata/poisoned/suppressions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	sups, err := ReadSuppressions(sf, "testdata/poisoned/suppressions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, []*Metadata{m, other}, &Options{Lock: lock, LockFile: lockPath, LockData: data, Suppressions: sups,
		Now: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)})
	// Only the poisoned server's findings are under test; the other server is context.
	rep.Findings = slices.DeleteFunc(rep.Findings, func(f Finding) bool { return f.Subject.Server == "trusted-mail" })
	return rep
}

// TestPoisonedCorpus requires every passive rule to fire on the poisoned corpus, and exactly
// the expected findings.
func TestPoisonedCorpus(t *testing.T) {
	rep := auditPoisoned(t)
	var got []string
	fired := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Suppressed != nil {
			if f.RuleID != RuleEntropy {
				t.Errorf("unexpected suppression of %s", key(f))
			}
		}
		got = append(got, key(f))
		fired[f.RuleID] = true
		if f.Location == nil || f.Location.File != "testdata/poisoned/tools.lock" || f.Location.Line < 1 {
			if f.Subject.Kind != KindSuppression {
				t.Errorf("%s: location %+v", key(f), f.Location)
			}
		}
		if f.Fix == "" || f.Message == "" {
			t.Errorf("%s: no fix or message", key(f))
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	if diff := cmp.Diff(readExpect(t, "testdata/poisoned/expect.txt"), got); diff != "" {
		t.Errorf("poisoned corpus findings (-want +got):\n%s", diff)
	}
	for _, r := range Catalog() {
		if r.Mode == Passive && !fired[r.ID] {
			t.Errorf("passive rule %s never fired on the poisoned corpus", r.ID)
		}
	}
}

// TestReportJSONFollowsSchema checks the poisoned corpus's JSON report, as the CLI wraps it,
// against schema/audit.v1.json.
func TestReportJSONFollowsSchema(t *testing.T) {
	sch := schematest.Compile(t, "audit.v1.json")
	wrapped := struct {
		*Report
		FailOn   string `json:"failOn"`
		Failing  int    `json:"failing"`
		ExitCode int    `json:"exitCode"`
	}{auditPoisoned(t), "high", 3, 6}
	var b bytes.Buffer
	if err := WriteJSON(&b, wrapped); err != nil {
		t.Fatal(err)
	}
	if err := schematest.Validate(t, sch, b.Bytes()); err != nil {
		t.Fatalf("audit JSON does not follow audit.v1.json: %v", err)
	}
}
