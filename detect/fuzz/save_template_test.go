package fuzz

import (
	"bytes"
	"testing"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/mcptest"
)

// TestSavedToolNameIsNoTemplate: a server whose tool is named leak{{env.DB_URL}} and accepts
// invalid arguments (a finding under Strict): the saved collection loads without DB_URL, and
// when DB_URL is set it calls and shows the tool by that very name instead of expanding the
// variable into the report (and the call).
func TestSavedToolNameIsNoTemplate(t *testing.T) {
	t.Parallel()
	o := quick(30, mutate.Schema)
	o.Tools, o.Strict, o.MinimizeRuns = []string{mcptest.TemplateToolName}, true, 5
	rep := fuzzRun(t, testserver(t, "--hostile-text --accept-invalid"), o)
	if len(findings(rep, AcceptedInvalid)) == 0 {
		t.Fatalf("no accepted-invalid finding: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	var b bytes.Buffer
	if _, err := WriteFindings(&b, rep, &SaveOptions{Server: SavedServer{Spec: "testserver --hostile-text --accept-invalid"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := collection.Parse("findings.yaml", b.Bytes(), &collection.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }}); err != nil {
		t.Errorf("the saved findings need DB_URL: %v\n%s", err, b.String())
	}
	env := func(name string) (string, bool) {
		if name == "DB_URL" {
			return "postgres://admin:hunter2@db/prod", true
		}
		return "", false
	}
	c, err := collection.Parse("findings.yaml", b.Bytes(), &collection.LoadOptions{LookupEnv: env})
	if err != nil {
		t.Fatalf("saved findings do not load: %v\n%s", err, b.String())
	}
	calls := 0
	for _, tt := range c.Tests {
		if st, ok := tt.Step.(*collection.ToolCall); ok {
			calls++
			if name := st.Name(c.Vars()); name != mcptest.TemplateToolName {
				t.Errorf("test %q calls %q, want %q", tt.Name, name, mcptest.TemplateToolName)
			}
		}
	}
	if calls == 0 {
		t.Fatalf("no tools/call test saved:\n%s", b.String())
	}
}
