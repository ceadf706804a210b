package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/internal/schematest"
)

// sarifSchema compiles the official SARIF 2.1.0 schema (errata 01) kept in testdata.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return schematest.CompileFile(t, "testdata/sarif-schema-2.1.0.json",
		"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
}

// TestSARIF checks the poisoned corpus's SARIF against the SARIF 2.1.0 schema and what GitHub
// code scanning requires: a physical location in the repository on every result (never an
// mcp:// URI), logical locations, partial fingerprints, an automation id and security-severity
// on every rule. The log is compared with a golden file (-update rewrites it).
func TestSARIF(t *testing.T) {
	rep := auditPoisoned(t)
	var b bytes.Buffer
	if err := WriteSARIF(&b, rep, &SARIFOptions{ToolVersion: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	schema := sarifSchema(t)
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("SARIF does not match the SARIF 2.1.0 schema: %v", err)
	}
	// The schema is strict enough to catch a wrong shape.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(b.String(), `"startLine": `, `"startLine": -`, 1)))
	if schema.Validate(bad) == nil {
		t.Fatal("the SARIF schema accepted a negative startLine")
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID         string         `json:"id"`
						Properties map[string]any `json:"properties"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			AutomationDetails struct {
				ID string `json:"id"`
			} `json:"automationDetails"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
					} `json:"logicalLocations"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Suppressions        []any             `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if run.AutomationDetails.ID != "mcpspec-audit/poisoned+trusted-mail/" {
		t.Errorf("automationDetails.id = %q", run.AutomationDetails.ID)
	}
	for _, r := range run.Tool.Driver.Rules {
		if s, _ := r.Properties["security-severity"].(string); s == "" {
			t.Errorf("rule %s has no security-severity", r.ID)
		}
	}
	if len(run.Results) != len(rep.Findings) {
		t.Errorf("%d results for %d findings", len(run.Results), len(rep.Findings))
	}
	suppressed := 0
	for _, res := range run.Results {
		if len(res.Locations) != 1 {
			t.Fatalf("%s: %d locations", res.RuleID, len(res.Locations))
		}
		l := res.Locations[0]
		uri := l.PhysicalLocation.ArtifactLocation.URI
		if uri == "" || strings.Contains(uri, "://") || l.PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("%s: physical location %q line %d", res.RuleID, uri, l.PhysicalLocation.Region.StartLine)
		}
		if len(l.LogicalLocations) == 0 || l.LogicalLocations[0].FullyQualifiedName == "" {
			t.Errorf("%s: no logical location", res.RuleID)
		}
		if res.PartialFingerprints["mcpspecFinding/v1"] == "" {
			t.Errorf("%s: no partial fingerprint", res.RuleID)
		}
		if run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("%s: ruleIndex %d names %s", res.RuleID, res.RuleIndex, run.Tool.Driver.Rules[res.RuleIndex].ID)
		}
		suppressed += len(res.Suppressions)
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1", suppressed)
	}
	golden.Check(t, "testdata/poisoned/audit.sarif", b.Bytes())
}

// TestConsoleLockfileAndSuppressed: without a lockfile no finding cites one of its lines;
// with one, the pinned server's findings do. A suppressed finding is one line unless
// explained.
func TestConsoleLockfileAndSuppressed(t *testing.T) {
	m := readMeta(t, "testdata/poisoned/poisoned.json")
	rep := mustRun(t, []*Metadata{m}, &Options{Suppressions: []Suppression{{Rule: RuleExec, Reason: "sandboxed in CI", Expires: "2099-12-31"}},
		Now: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	var b bytes.Buffer
	if err := WriteConsole(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "at "+DefaultLockPath+":") {
		t.Errorf("a finding cites the lockfile that does not exist:\n%s", out)
	}
	i := strings.Index(out, "exec-capability")
	if i < 0 {
		t.Fatalf("no exec-capability finding:\n%s", out)
	}
	block := out[i:]
	if j := strings.Index(block, "\n\n"); j >= 0 {
		block = block[:j]
	}
	if !strings.Contains(block, "suppressed until 2099-12-31: sandboxed in CI") || strings.Contains(block, "fix:") || strings.Count(block, "\n") > 1 {
		t.Errorf("suppressed finding printed in full:\n%s", block)
	}
	var e bytes.Buffer
	if err := WriteConsole(&e, rep, &ConsoleOptions{Explain: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.String(), "suppressed until 2099-12-31: sandboxed in CI\n  the tool executes code") {
		t.Errorf("--explain does not show the suppressed finding in full:\n%s", e.String())
	}

	data, err := os.ReadFile("testdata/poisoned/tools.lock")
	if err != nil {
		t.Fatal(err)
	}
	lock, err := ReadLock(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rep = mustRun(t, []*Metadata{m}, &Options{Lock: lock, LockData: data})
	b.Reset()
	if err := WriteConsole(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "at "+DefaultLockPath+":") {
		t.Errorf("a pinned server's findings do not cite the lockfile:\n%s", b.String())
	}
}
