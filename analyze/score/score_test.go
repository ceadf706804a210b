package score

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func inv(t *testing.T, version string, tools ...string) *inventory.Inventory {
	t.Helper()
	i := &inventory.Inventory{ProtocolVersion: version, ServerInfo: session.Implementation{Name: "s", Version: "1"}, Capabilities: json.RawMessage(`{"tools":{}}`)}
	for _, raw := range tools {
		var tl session.Tool
		if err := json.Unmarshal([]byte(raw), &tl); err != nil {
			t.Fatal(err)
		}
		tl.Raw = json.RawMessage(raw)
		i.Tools = append(i.Tools, tl)
	}
	return i
}

func check(t *testing.T, r *Result, id string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s", id)
	return Check{}
}

// accountedFor checks that every point is accounted for: the totals are the sums of the
// checks, and no check earns more than it may.
func accountedFor(t *testing.T, r *Result) {
	t.Helper()
	var possible, earned float64
	cats := map[Category][2]float64{}
	for _, c := range r.Checks {
		if c.Earned < 0 || c.Earned > c.Possible+1e-9 {
			t.Errorf("%s earns %v of %v", c.ID, c.Earned, c.Possible)
		}
		if !c.Applies {
			if c.Earned != 0 {
				t.Errorf("%s does not apply but earns %v", c.ID, c.Earned)
			}
			continue
		}
		possible += c.Possible
		earned += c.Earned
		x := cats[c.Category]
		cats[c.Category] = [2]float64{x[0] + c.Possible, x[1] + c.Earned}
	}
	if math.Abs(possible-r.Possible) > 0.01 || math.Abs(earned-r.Earned) > 0.01 {
		t.Errorf("totals %v/%v, checks sum to %v/%v", r.Earned, r.Possible, earned, possible)
	}
	for _, c := range r.Categories {
		if x := cats[c.Category]; math.Abs(x[0]-c.Possible) > 0.01 || math.Abs(x[1]-c.Earned) > 0.01 {
			t.Errorf("category %s %v/%v, checks sum to %v/%v", c.Category, c.Earned, c.Possible, x[1], x[0])
		}
	}
	all := 0.0
	for _, c := range r.Checks {
		all += c.Possible
	}
	if all != 100 {
		t.Errorf("the rubric's checks are worth %v points, not 100", all)
	}
}

func TestMetadataChecks(t *testing.T) {
	good := `{"name":"read_file","title":"Read file","description":"Returns the text of a file under the allowed root.","annotations":{"readOnlyHint":true},
		"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Relative path."}},"required":["path"]},"outputSchema":{"type":"object"}}`
	vague := `{"name":"get_data","description":"Gets data.","inputSchema":{"type":"object","properties":{"id":{}}}}`
	noParams := `{"name":"list_roots","title":"Roots","description":"Lists every allowed root directory.","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}`

	r := Rate(&Input{Inventory: inv(t, session.Version20251125, good, vague, noParams)})
	accountedFor(t, r)
	cases := []struct {
		id     string
		earned float64
		items  []string
	}{
		{"metadata.description", pDescription * 2 / 3.0, []string{"get_data"}},
		// list_roots has no parameter: it counts neither for nor against.
		{"metadata.parameter-descriptions", pParamDesc * 1 / 2.0, []string{"get_data.id"}},
		{"metadata.parameter-types", pParamType * 1 / 2.0, []string{"get_data.id"}},
		{"metadata.titles", pTitle * 2 / 3.0, []string{"get_data"}},
		{"metadata.annotations", pAnnotations * 2 / 3.0, []string{"get_data"}},
		{"metadata.output-schemas", pOutputSchema * 2 / 3.0, []string{"get_data"}},
	}
	for _, c := range cases {
		got := check(t, r, c.id)
		if !got.Applies || math.Abs(got.Earned-round2(c.earned)) > 0.001 || !cmp.Equal(got.Items, c.items) {
			t.Errorf("%s: applies %v earned %v items %v; want %v %v", c.id, got.Applies, got.Earned, got.Items, round2(c.earned), c.items)
		}
	}

	// An old protocol: titles and output schemas do not exist yet, annotations neither before
	// 2025-03-26. They leave the denominator.
	old := Rate(&Input{Inventory: inv(t, session.Version20241105, vague)})
	accountedFor(t, old)
	for _, id := range []string{"metadata.titles", "metadata.output-schemas", "metadata.annotations"} {
		if c := check(t, old, id); c.Applies {
			t.Errorf("%s applies under 2024-11-05", id)
		}
	}
	// A parameterless server is not penalised for missing parameter descriptions.
	bare := Rate(&Input{Inventory: inv(t, session.Version20251125, noParams)})
	if c := check(t, bare, "metadata.parameter-descriptions"); c.Applies {
		t.Error("parameter descriptions apply to a server without parameters")
	}
	if bare.Score != 100 {
		t.Errorf("a perfect parameterless tool scores %d", bare.Score)
	}
}

func TestSaysMore(t *testing.T) {
	cases := map[[2]string]bool{
		{"get_data", "Gets data."}:                   false,
		{"read_file", "Read a file"}:                 false,
		{"read_file", "Returns the text of a file."}: true,
		{"echo", ""}: false,
		{"search", "Search the web and return the top links"}:          true,
		{"delete_entities", "Delete multiple entities from the graph"}: true,
	}
	for in, want := range cases {
		if got := saysMore(in[0], in[1]); got != want {
			t.Errorf("saysMore(%q, %q) = %v", in[0], in[1], got)
		}
	}
}

func TestTokenChecks(t *testing.T) {
	rep := func(cores ...int) *tokens.Report {
		r := &tokens.Report{Encoding: tokens.O200kBase}
		for i, c := range cores {
			r.Tools = append(r.Tools, tokens.ToolCost{Tool: string(rune('a' + i)), Cost: tokens.Cost{Core: c}})
			r.Total.Core += c
		}
		return r
	}
	cases := []struct {
		cores          []int
		mean, heaviest float64
	}{
		{[]int{100, 200}, pMeanCore, pHeaviestCore},                 // mean 150: full
		{[]int{600, 600}, 0, pHeaviestCore * (2000 - 600) / 1500.0}, // mean 600: none
		{[]int{375}, pMeanCore * 0.5, pHeaviestCore},                // halfway
		{[]int{100, 2500}, pMeanCore * (600 - 1300) / 450.0 * 0, 0}, // heaviest over 2000
	}
	for _, c := range cases {
		r := Rate(&Input{Tokens: rep(c.cores...)})
		if got := check(t, r, "tokens.mean-core").Earned; math.Abs(got-round2(math.Max(0, c.mean))) > 0.001 {
			t.Errorf("%v: mean-core %v, want %v", c.cores, got, c.mean)
		}
		if got := check(t, r, "tokens.heaviest-core").Earned; math.Abs(got-round2(c.heaviest)) > 0.001 {
			t.Errorf("%v: heaviest-core %v, want %v", c.cores, got, c.heaviest)
		}
	}
}

func TestProtocolChecks(t *testing.T) {
	rpc := func(code int) Outcome { return Outcome{Kind: RPCError, Code: code} }
	toolErr := Outcome{Kind: ToolError}
	ok := Outcome{Kind: Success}
	cases := []struct {
		name    string
		version string
		p       Probes
		want    map[string]float64
	}{
		{"by the book, 2025-11-25", session.Version20251125,
			Probes{Handshake: true, Ping: ok, InvalidCursor: rpc(-32602), UnknownTool: rpc(-32602), InvalidArguments: &toolErr, InvalidArgumentsTool: "t"},
			map[string]float64{"protocol.handshake": 3, "protocol.pagination": 3, "protocol.unknown-tool": 5, "protocol.invalid-arguments": 6}},
		{"by the book, 2025-06-18", session.Version20250618,
			Probes{Handshake: true, Ping: ok, InvalidCursor: rpc(-32602), UnknownTool: rpc(-32601), InvalidArguments: &Outcome{Kind: RPCError, Code: -32602}, InvalidArgumentsTool: "t"},
			map[string]float64{"protocol.unknown-tool": 5, "protocol.invalid-arguments": 6}},
		{"the other form of error", session.Version20251125,
			Probes{Handshake: true, Ping: ok, InvalidCursor: rpc(-32603), UnknownTool: toolErr, InvalidArguments: &Outcome{Kind: RPCError, Code: -32602}, InvalidArgumentsTool: "t"},
			map[string]float64{"protocol.pagination": 2, "protocol.unknown-tool": 2.5, "protocol.invalid-arguments": 4.5}},
		{"lenient server", session.Version20250618,
			Probes{Handshake: true, Ping: Outcome{Kind: Failure, Detail: "Timeout"}, InvalidCursor: ok, UnknownTool: ok, InvalidArguments: &ok, InvalidArgumentsTool: "t"},
			map[string]float64{"protocol.handshake": 2, "protocol.pagination": 1, "protocol.unknown-tool": 0, "protocol.invalid-arguments": 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			r := Rate(&Input{Inventory: inv(t, c.version, `{"name":"t","inputSchema":{"type":"object"}}`), Probes: &p})
			accountedFor(t, r)
			for id, want := range c.want {
				if got := check(t, r, id); !got.Applies || got.Earned != want {
					t.Errorf("%s: %v (applies %v), want %v: %s", id, got.Earned, got.Applies, want, got.Reason)
				}
			}
		})
	}
	// No read-only tool with required parameters: the check leaves the denominator.
	r := Rate(&Input{Inventory: inv(t, session.Version20251125), Probes: &Probes{Handshake: true, Ping: Outcome{Kind: Success}, UnknownTool: rpc(-32602), InvalidCursor: rpc(-32602)}})
	if c := check(t, r, "protocol.invalid-arguments"); c.Applies {
		t.Error("invalid-arguments applies without a safe tool")
	}
}

func TestSecurityWeightsAndCap(t *testing.T) {
	base := &Input{Inventory: inv(t, session.Version20251125, `{"name":"read_file","title":"Read","description":"Returns the text of a file under the root.","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}`)}
	rate := func(fs ...SecurityFinding) *Result {
		in := *base
		in.Security = &SecurityInput{Source: "audit", Findings: fs}
		r := Rate(&in)
		accountedFor(t, r)
		return r
	}
	if r := rate(); check(t, r, "security.audit").Earned != 30 || r.Score != 100 {
		t.Errorf("clean: %+v", check(t, r, "security.audit"))
	}
	// high (12) × firm (0.8) + medium (5) × tentative (0.5) = 9.6 + 2.5 = 12.1 lost.
	r := rate(SecurityFinding{Rule: "toxic-flow", Severity: 3, Confidence: 1, Subject: "tool a"}, SecurityFinding{Rule: "exec", Severity: 2, Confidence: 0, Subject: "tool b"})
	if got := check(t, r, "security.audit").Earned; got != 17.9 {
		t.Errorf("weighted: %v, want 17.9", got)
	}
	// A critical that is only firm costs 20 points but does not cap.
	r = rate(SecurityFinding{Rule: "secret", Severity: 4, Confidence: 1, Subject: "tool a"})
	if r.Cap != "" || check(t, r, "security.audit").Earned != 10 {
		t.Errorf("firm critical: cap %q earned %v", r.Cap, check(t, r, "security.audit").Earned)
	}
	// A confirmed critical caps the whole score.
	r = rate(SecurityFinding{Rule: "hidden-tag-characters", Severity: 4, Confidence: 2, Subject: "tool a"})
	if r.Score != CriticalCap || !strings.Contains(r.Cap, "hidden-tag-characters") || r.Raw <= CriticalCap {
		t.Errorf("confirmed critical: score %d raw %v cap %q", r.Score, r.Raw, r.Cap)
	}
	// Without an audit the category leaves the denominator.
	if r := Rate(base); check(t, r, "security.audit").Applies || r.Categories[0].Possible != 0 {
		t.Error("security applies without an audit")
	}
}

func TestDiscoveryChecks(t *testing.T) {
	tools := []string{
		`{"name":"a","description":"Search the issue tracker for open bugs by keyword"}`,
		`{"name":"b","description":"Search the issue tracker for open bugs by keyword."}`,
		`{"name":"c","description":"Send an email to a colleague"}`,
		`{"name":"d","description":"x"}`,
	}
	r := Rate(&Input{Inventory: inv(t, session.Version20251125, tools...)})
	c := check(t, r, "discoverability.distinct-descriptions")
	if c.Earned != pDistinct*2/4.0 || len(c.Items) != 1 || !strings.HasPrefix(c.Items[0], "a ~ b (100%") {
		t.Errorf("near duplicates: %v %v", c.Earned, c.Items)
	}
	if check(t, r, "discoverability.retrieval").Applies {
		t.Error("retrieval applies without a golden set")
	}
	rep := &retrieval.Report{Search: "bm25", Queries: 3, Metrics: retrieval.Metrics{RecallAt: map[int]float64{5: 0.5}, MRR: 0.25, NDCGAt10: 0.75}}
	r = Rate(&Input{Inventory: inv(t, session.Version20251125, tools...), Retrieval: rep})
	if got := check(t, r, "discoverability.retrieval").Earned; got != 2 {
		t.Errorf("retrieval: %v, want 2×0.5 + 0.25 + 0.75 = 2", got)
	}
}

func TestBadge(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBadge(&b, &Result{Score: 87, Rubric: "v1"}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "badge-87.svg"), b.Bytes())
	if err := xml.Unmarshal(b.Bytes(), new(struct{ XMLName xml.Name })); err != nil {
		t.Errorf("badge is not XML: %v", err)
	}
	if !strings.Contains(b.String(), ">87 · v1</text>") || !strings.Contains(b.String(), BadgeColor(87)) {
		t.Errorf("badge: %s", b.String())
	}
	for s, want := range map[int]string{100: "#4c1", 90: "#4c1", 89: "#a4a61d", 60: "#dfb317", 40: "#fe7d37", 39: "#e05d44"} {
		if got := BadgeColor(s); got != want {
			t.Errorf("BadgeColor(%d) = %s, want %s", s, got, want)
		}
	}
}

// TestReferenceServersExplained rates the committed inventories of the reference servers
// offline (audit included, no probes) and keeps the explanation as a golden file.
func TestReferenceServersExplained(t *testing.T) {
	for _, name := range []string{"server-everything", "server-filesystem", "server-memory"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "inventory", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var in inventory.Inventory
			if err := json.Unmarshal(data, &in); err != nil {
				t.Fatal(err)
			}
			c, _ := tokens.NewCounter(tokens.O200kBase)
			rep, err := tokens.Measure(c, in.Tools)
			if err != nil {
				t.Fatal(err)
			}
			r := Rate(&Input{Inventory: &in, Tokens: rep, Security: mustAudit(t, &in, nil)})
			accountedFor(t, r)
			var b bytes.Buffer
			if err := WriteText(&b, r, true); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".explain.txt"), b.Bytes())
		})
	}
}

// TestProbeReferenceServer probes the built-in server in both eras.
func TestProbeReferenceServer(t *testing.T) {
	for _, v := range []string{session.Version20260728, session.Version20250618} {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := mcptest.NewServer(nil)
			defer srv.Close()
			d, _, err := spec.Parse(srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := session.Open(ctx, d, &session.Options{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			in, err := inventory.Collect(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			p := Probe(ctx, s, in)
			if !p.Handshake || p.Ping.Kind != Success {
				t.Errorf("handshake/ping: %+v", p.Ping)
			}
			if p.UnknownTool.Kind != RPCError {
				t.Errorf("unknown tool: %+v", p.UnknownTool)
			}
			// add is read-only and requires a and b.
			if p.InvalidArgumentsTool != "add" || p.InvalidArguments == nil || p.InvalidArguments.Kind == Success || p.InvalidArguments.Kind == Failure {
				t.Errorf("invalid arguments: %s %+v", p.InvalidArgumentsTool, p.InvalidArguments)
			}
			if p.InvalidCursor.Kind == Failure {
				t.Errorf("invalid cursor: %+v", p.InvalidCursor)
			}
			r := Rate(&Input{Inventory: in, Probes: p})
			accountedFor(t, r)
			if got := r.Categories[3]; got.Category != Protocol || got.Possible != 20 {
				t.Errorf("protocol category %+v", got)
			}
		})
	}
}
