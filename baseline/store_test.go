package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
)

var t0 = time.Date(2026, 5, 10, 7, 30, 0, 0, time.UTC)

func TestSanitizeName(t *testing.T) {
	cases := []struct {
		in, want string
		err      bool
	}{
		{"main", "main", false},
		{"feature/x", "feature-x", false},
		{"release/1.2", "release-1.2", false},
		{"Fix: bug #3", "Fix-bug-3", false},
		{"a//b\\c", "a-b-c", false},
		{"../../etc/passwd", "etc-passwd", false},
		{".hidden", "hidden", false},
		{"trailing.", "trailing", false},
		{"--x--", "x", false},
		{"naïve/ブランチ", "na-ve", false},
		{"con", "con_", false},
		{"NUL.json", "NUL.json_", false},
		{"com10", "com10", false},
		{"user_1.2-rc", "user_1.2-rc", false},
		{strings.Repeat("a", 300), strings.Repeat("a", 100), false},
		{"", "", true},
		{"   ", "", true},
		{"///", "", true},
		{"..", "", true},
		{"ブランチ", "", true},
	}
	for _, tc := range cases {
		got, err := SanitizeName(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("SanitizeName(%q) = %q, %v; want %q, err=%v", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("SanitizeName(%q) error %v is not ErrInvalidName", tc.in, err)
		}
	}
}

func storedRun(id string) *result.Run {
	return &result.Run{
		SchemaVersion: result.SchemaVersion, ID: id, StartedAt: t0, Duration: time.Second,
		Git: &result.Git{Branch: "feature/x", Commit: "abc"},
		Collections: []*result.Collection{{
			Name: "c", StartedAt: t0,
			Tools: map[string][]result.Tool{"s": {{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}},
			Tests: []*result.Test{
				{ID: "a", Name: "a", Kind: "tool", Status: result.Passed, Latency: 3 * time.Millisecond,
					Attempts: []result.Attempt{{Status: result.Passed, Latency: 3 * time.Millisecond}}},
				{ID: "b", Name: "b", Kind: "tool", Status: result.Failed,
					Failures: []result.Failure{{Assertion: "equals", Message: "x"}}},
			},
		}},
	}
}

func TestSaveLoadList(t *testing.T) {
	dir := t.TempDir()
	p, err := Save(dir, "feature/x", storedRun("r1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".mcpspec", "baselines", "feature-x.json"); p != want {
		t.Errorf("Save path = %s, want %s", p, want)
	}
	// Overwrite atomically; no temporary files remain.
	if _, err := Save(dir, "feature/x", storedRun("r2"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(dir, "main", storedRun("r0"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir, "feature/x")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(storedRun("r2"), got, cmp.Comparer(sameJSON)); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	// A corrupt file and a stray file in the store.
	base := filepath.Join(dir, ".mcpspec", "baselines")
	os.WriteFile(filepath.Join(base, "broken.json"), []byte("{not json"), 0o644)
	os.WriteFile(filepath.Join(base, "README.txt"), []byte("hi"), 0o644)
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	if d := cmp.Diff([]string{"broken", "feature-x", "main"}, names); d != "" {
		t.Errorf("List names (-want +got):\n%s", d)
	}
	if list[0].Problem == "" {
		t.Error("corrupt baseline listed without a problem")
	}
	if e := list[1]; e.RunID != "r2" || e.Counts != (Counts{Total: 2, Passed: 1, Failed: 1}) || e.Git.Branch != "feature/x" {
		t.Errorf("List entry = %+v", e)
	}
	if err := Remove(dir, "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, "main"); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(removed) = %v, want ErrNotFound and fs.ErrNotExist", err)
	}
	if err := Remove(dir, "main"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove(missing) = %v", err)
	}
}

func TestListWithoutStore(t *testing.T) {
	list, err := List(t.TempDir())
	if err != nil || len(list) != 0 {
		t.Errorf("List(empty dir) = %v, %v", list, err)
	}
}

func TestLatest(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadLatest(dir); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadLatest(nothing) = %v, want ErrNotFound", err)
	}
	p, err := SaveLatest(dir, storedRun("latest"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, ".mcpspec", "runs", "latest.json"); p != want {
		t.Errorf("SaveLatest path = %s", p)
	}
	run, err := LoadLatest(dir)
	if err != nil || run.ID != "latest" {
		t.Fatalf("LoadLatest = %v, %v", run, err)
	}
	// Promote the latest run to a baseline, as `mcpspec baseline save NAME` does.
	if _, err := Save(dir, "main", run, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := Load(dir, "main"); err != nil || b.ID != "latest" {
		t.Errorf("promoted baseline = %v, %v", b, err)
	}
}

func TestReadRun(t *testing.T) {
	// The json reporter's output (with its extra summary) is a valid input.
	var buf bytes.Buffer
	if err := reporters.NewJSON(nil).Report(&buf, storedRun("from-reporter")); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(&buf)
	if err != nil || run.ID != "from-reporter" {
		t.Fatalf("ReadRun(json reporter output) = %v, %v", run, err)
	}
	for name, doc := range map[string]string{
		"other version": `{"schemaVersion":"2","id":"x"}`,
		"no version":    `{"id":"x"}`,
		"not json":      `<xml/>`,
		"empty":         ``,
	} {
		if _, err := ReadRun(strings.NewReader(doc)); err == nil {
			t.Errorf("ReadRun(%s) accepted %q", name, doc)
		}
	}
	if _, err := ReadRun(strings.NewReader(`{"schemaVersion":"2"}`)); !errors.Is(err, ErrSchemaVersion) {
		t.Errorf("want ErrSchemaVersion, got %v", err)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// TestSaveMasksTheBytes stores a run whose result still holds a secret (a form the runner did
// not mask): the files hold no form of it.
func TestSaveMasksTheBytes(t *testing.T) {
	dir := t.TempDir()
	secret := "p@ss\"w\\ord<&>"
	run := storedRun("r1")
	run.Collections[0].Tests[0].Failures = []result.Failure{{Assertion: "equals", Actual: strconv.Quote(secret), Message: "got " + secret}}
	m := redact.NewMasker()
	m.Add(secret)
	p1, err := Save(dir, "main", run, m)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := SaveLatest(dir, run, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{p1, p2} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range redact.Forms(secret) {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s holds the secret as %q", p, f)
			}
		}
		if !bytes.Contains(b, []byte(`"actual": "\"***\""`)) {
			t.Errorf("%s does not hold the masked value:\n%s", p, b)
		}
	}
}
