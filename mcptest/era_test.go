package mcptest_test

import (
	"encoding/json"
	"hash/fnv"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/mcptest"
)

func TestInitializeNegotiation(t *testing.T) {
	tests := []struct{ requested, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", "2025-11-25"},
		{"", "2025-11-25"},
	}
	for _, era := range []mcptest.Era{mcptest.EraBoth, mcptest.EraLegacy} {
		_, c := startTCP(t, &mcptest.Options{Era: era})
		for _, tt := range tests {
			var res struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Capabilities    map[string]any `json:"capabilities"`
				ServerInfo      struct{ Name string }
			}
			c.result("initialize", map[string]any{"protocolVersion": tt.requested, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "t", "version": "0"}}, &res)
			if res.ProtocolVersion != tt.want || res.ServerInfo.Name != "mcptest" || res.Capabilities["tools"] == nil {
				t.Errorf("era %q: initialize %q → %+v, want %q", era, tt.requested, res, tt.want)
			}
		}
	}
}

func TestEraRules(t *testing.T) {
	const modern = mcptest.StatelessVersion
	tests := []struct {
		name     string
		era      mcptest.Era
		method   string
		params   map[string]any
		wantCode int // 0: success
	}{
		{"discover in both", mcptest.EraBoth, "server/discover", nil, 0},
		{"discover in stateless", mcptest.EraStateless, "server/discover", statelessMeta(nil, modern), 0},
		{"discover in legacy", mcptest.EraLegacy, "server/discover", nil, mcptest.CodeMethodNotFound},
		{"initialize in stateless", mcptest.EraStateless, "initialize", map[string]any{"protocolVersion": "2025-11-25"}, mcptest.CodeMethodNotFound},
		{"missing _meta", mcptest.EraStateless, "tools/list", nil, mcptest.CodeInvalidParams},
		{"missing _meta before initialize", mcptest.EraBoth, "tools/list", nil, mcptest.CodeInvalidParams},
		{"unsupported version", mcptest.EraBoth, "tools/list", statelessMeta(nil, "2030-01-01"), mcptest.CodeUnsupportedVersion},
		{"ping in stateless", mcptest.EraStateless, "ping", statelessMeta(nil, modern), mcptest.CodeMethodNotFound},
		{"setLevel in stateless", mcptest.EraBoth, "logging/setLevel", statelessMeta(map[string]any{"level": "info"}, modern), mcptest.CodeMethodNotFound},
		{"initialize with _meta", mcptest.EraBoth, "initialize", statelessMeta(nil, modern), mcptest.CodeMethodNotFound},
		{"resource not found (stateless)", mcptest.EraBoth, "resources/read", statelessMeta(map[string]any{"uri": "mcptest://nope"}, modern), mcptest.CodeInvalidParams},
		{"tools/list stateless", mcptest.EraBoth, "tools/list", statelessMeta(nil, modern), 0},
		{"ping legacy before initialize", mcptest.EraBoth, "ping", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := startTCP(t, &mcptest.Options{Era: tt.era})
			m := c.call(tt.method, tt.params)
			switch {
			case tt.wantCode == 0 && m.Error != nil:
				t.Fatalf("error %d %s", m.Error.Code, m.Error.Message)
			case tt.wantCode != 0 && (m.Error == nil || m.Error.Code != tt.wantCode):
				t.Fatalf("got %s, want error %d", m.raw, tt.wantCode)
			}
			if tt.wantCode == 0 && tt.params != nil {
				var r struct {
					ResultType string `json:"resultType"`
				}
				_ = json.Unmarshal(m.Result, &r)
				if r.ResultType != "complete" {
					t.Errorf("stateless result without resultType complete: %s", m.Result)
				}
			}
		})
	}
}

func TestDiscoverAndUnsupportedVersion(t *testing.T) {
	_, c := startTCP(t, nil)
	var d struct {
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		ServerInfo        struct{ Name string }
		ResultType        string `json:"resultType"`
	}
	c.result("server/discover", statelessMeta(nil, mcptest.StatelessVersion), &d)
	want := append([]string{"2026-07-28"}, mcptest.LegacyVersions()...)
	if diff := cmp.Diff(want, d.SupportedVersions); diff != "" || d.ServerInfo.Name != "mcptest" || d.ResultType != "complete" {
		t.Errorf("discover: %+v (-want +got versions):\n%s", d, diff)
	}
	if d.Capabilities["logging"] != nil {
		t.Error("stateless capabilities advertise logging")
	}

	m := c.call("tools/call", statelessMeta(toolCall("echo", map[string]any{"text": "x"}), "2025-01-01"))
	if m.Error == nil || m.Error.Code != mcptest.CodeUnsupportedVersion {
		t.Fatalf("got %s, want -32022", m.raw)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if err := json.Unmarshal(m.Error.Data, &data); err != nil || data.Requested != "2025-01-01" || !slices.Equal(data.Supported, []string{"2026-07-28"}) {
		t.Errorf("-32022 data = %s", m.Error.Data)
	}

	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	c.result("tools/list", statelessMeta(nil, mcptest.StatelessVersion), &list)
	if n := len(list.Tools); n != 6 || list.Tools[5].Name != "confirm" {
		t.Errorf("stateless tools: %+v", list.Tools)
	}
	var echo toolResult
	c.result("tools/call", statelessMeta(toolCall("echo", map[string]any{"text": "modern"}), mcptest.StatelessVersion), &echo)
	if echo.text() != "modern" || echo.ResultType != "complete" {
		t.Errorf("stateless echo: %+v", echo)
	}
}

func TestConfirmMRTR(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{Era: mcptest.EraStateless})
	v := mcptest.StatelessVersion
	args := map[string]any{"message": "delete everything?"}

	var first toolResult
	c.result("tools/call", statelessMeta(toolCall("confirm", args), v), &first)
	if first.ResultType != "input_required" || first.RequestState == "" || len(first.Content) != 0 {
		t.Fatalf("first round: %+v", first)
	}
	var reqs map[string]struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal(first.InputRequests, &reqs); err != nil || reqs["confirm"].Method != "elicitation/create" || reqs["confirm"].Params.Message != "delete everything?" {
		t.Fatalf("inputRequests = %s", first.InputRequests)
	}

	retry := func(state string, action string, confirmed bool) msg {
		p := toolCall("confirm", args)
		p["requestState"] = state
		p["inputResponses"] = map[string]any{"confirm": map[string]any{"action": action, "content": map[string]any{"confirmed": confirmed}}}
		return c.call("tools/call", statelessMeta(p, v))
	}
	var done toolResult
	m := retry(first.RequestState, "accept", true)
	if err := json.Unmarshal(m.Result, &done); err != nil || done.ResultType != "complete" || done.text() != "confirmed: delete everything?" {
		t.Errorf("accepted retry: %s", m.raw)
	}
	m = retry(first.RequestState, "decline", false)
	if err := json.Unmarshal(m.Result, &done); err != nil || done.text() != "declined (decline): delete everything?" {
		t.Errorf("declined retry: %s", m.raw)
	}
	if m := retry(first.RequestState+"x", "accept", true); m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		t.Errorf("tampered requestState: %s", m.raw)
	}
}

// TestFlakyGolden pins the flaky tool's rolls: they must never change across releases,
// processes, operating systems or architectures.
func TestFlakyGolden(t *testing.T) {
	h := fnv.New64a()
	if h.Sum64() != 0xcbf29ce484222325 { // FNV-1a offset basis: the hash of ""
		t.Fatal("FNV-1a basis changed")
	}
	golden := []struct {
		seed   string
		callID int64
		roll   float64
	}{
		{"", 0, 0.35173394691040605},
		{"", 1, 0.07047115899861389},
		{"", 3, 0.825721317372496},
		{"", -1, 0.3636573538470764},
		{"alpha", 0, 0.6660210566134104},
		{"alpha", 1, 0.5289099301116048},
		{"alpha", 2, 0.04031865117936462},
		{"alpha", 42, 0.9629668029551108},
		{"mcpspec", 0, 0.9008080147968308},
		{"mcpspec", 2, 0.3001685556881425},
		{"mcpspec", 42, 0.6336887034666012},
	}
	for _, g := range golden {
		if got := mcptest.FlakyRoll(g.seed, g.callID); got != g.roll {
			t.Errorf("FlakyRoll(%q, %d) = %v, want %v", g.seed, g.callID, got, g.roll)
		}
	}
	if got := mcptest.FlakyFailureMessage(0.42311, 0.5); got != "flaky failure (roll=0.4231 < rate=0.5000)" {
		t.Errorf("message = %q", got)
	}

	// Over the wire, the same (seed, call_id) gives the same outcome on every call.
	_, c := startTCP(t, nil)
	c.initialize()
	for range 3 {
		var ok toolResult
		c.result("tools/call", toolCall("flaky", map[string]any{"fail_rate": 0.5, "seed": "mcpspec", "call_id": 42}), &ok)
		if ok.text() != "flaky success (roll=0.6337 >= rate=0.5000)" {
			t.Errorf("flaky(mcpspec, 42) = %q", ok.text())
		}
		m := c.call("tools/call", toolCall("flaky", map[string]any{"fail_rate": 0.5, "seed": "mcpspec", "call_id": 2}))
		if m.Error == nil || m.Error.Message != "flaky failure (roll=0.3002 < rate=0.5000)" {
			t.Errorf("flaky(mcpspec, 2) = %s", m.raw)
		}
	}
}
