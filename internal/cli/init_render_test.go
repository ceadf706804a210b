package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/collection"
)

// loadRendered writes plan's collection into a temporary directory and loads it.
func loadRendered(t *testing.T, plan *initPlan) (*collection.Collection, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, renderCollection(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	return collection.Load(path, nil)
}

// TestRenderCollectionQuotesWhatServersChose: tool names and argument values a server chose —
// YAML syntax, quotes, line breaks, variable braces — load back as the same name and the same
// arguments (braces escaped so that mcpspec does not expand them).
func TestRenderCollectionQuotesWhatServersChose(t *testing.T) {
	names := []string{"echo", "a{{env.HOME}}b", `back\{{x}}`, "a\\{{b", `quo"te`, "new\nline", "- item", "key: value", "#comment", "yes", "ü-ß", "get user", "Get User"}
	plan := &initPlan{name: "srv", server: "testserver --x '{{y}}'"}
	ids := map[string]bool{initListID: true}
	for _, n := range names {
		plan.tests = append(plan.tests, &initTest{id: uniqueID(ids, n), tool: n, outcome: initOK, snapshot: true,
			args: map[string]any{"s": n, "n": 1.5, "list": []any{"{{x}}", true}, "obj": map[string]any{"{{k}}": nil}}})
	}
	plan.tests = append(plan.tests,
		&initTest{id: "err", tool: "err", outcome: initToolError, args: map[string]any{}, snapshot: true},
		&initTest{id: "rpc", tool: "rpc", outcome: initRPCError, code: -32602, args: map[string]any{}},
		&initTest{id: "gone", tool: "gone", left: "its call failed (Crash): boom\nsecond line"})
	col, err := loadRendered(t, plan)
	if err != nil {
		t.Fatalf("the rendered collection does not load: %v\n%s", err, renderCollection(plan))
	}
	if got, want := len(col.Tests), 1+len(names)+2; got != want {
		t.Fatalf("%d tests, want %d", got, want)
	}
	for i, n := range names {
		tc := col.Tests[i+1]
		call, ok := tc.Step.(*collection.ToolCall)
		if !ok {
			t.Fatalf("test %d: step %T", i+1, tc.Step)
		}
		if call.Name(nil) != n {
			t.Errorf("tool %q loads as %q", n, call.Name(nil))
		}
		want, _ := json.Marshal(escapeBraces(plan.tests[i].args))
		got, _ := json.Marshal(call.Input)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("tool %q: arguments (-want +got):\n%s", n, diff)
		}
		if tc.ID != plan.tests[i].id {
			t.Errorf("tool %q: id %q, want %q", n, tc.ID, plan.tests[i].id)
		}
	}
	if col.Tests[1+len(names)+1].ID != "rpc" || col.Tests[1+len(names)].ID != "err" {
		t.Errorf("the error tests are missing")
	}
}

// FuzzRenderCollection: whatever a server names its tool, the starter collection loads and
// calls that tool.
func FuzzRenderCollection(f *testing.F) {
	for _, s := range []string{"echo", "{{x}}", "a\\{{b", "\"'", "\t- x: y", "\u2028", "\\", "%TAG", "..."} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, arg string) {
		if !utf8.ValidString(name) || !utf8.ValidString(arg) || strings.TrimSpace(name) == "" {
			t.Skip() // JSON cannot carry invalid UTF-8; callOnce leaves blank names out
		}
		plan := &initPlan{name: "srv", server: "testserver", tests: []*initTest{{id: "t", tool: name, outcome: initOK, args: map[string]any{"a": arg}}}}
		col, err := loadRendered(t, plan)
		if err != nil {
			t.Fatalf("tool %q, argument %q: %v\n%s", name, arg, err, renderCollection(plan))
		}
		if got := col.Tests[1].Step.(*collection.ToolCall).Name(nil); got != name {
			t.Errorf("tool %q loads as %q", name, got)
		}
	})
}
