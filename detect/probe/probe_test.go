package probe

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// TestRowsTable checks the table itself: unique ids of the form group.check (or a single
// word), a title, a citation that names a document and version but no URL, and a check.
func TestRowsTable(t *testing.T) {
	idRE := regexp.MustCompile(`^[a-z]+(\.[a-z0-9-]+)?$`)
	seen := map[string]bool{}
	for _, r := range Rows() {
		if !idRE.MatchString(r.ID) {
			t.Errorf("row id %q is not group.check", r.ID)
		}
		if seen[r.ID] {
			t.Errorf("row id %q appears twice", r.ID)
		}
		seen[r.ID] = true
		if r.Title == "" || r.Run == nil {
			t.Errorf("row %s has no title or no check", r.ID)
		}
		if !regexp.MustCompile(`^(MCP \d{4}-\d{2}-\d{2}|JSON-RPC 2\.0|RFC \d+) · `).MatchString(r.Spec) {
			t.Errorf("row %s cites %q: want the document and version first", r.ID, r.Spec)
		}
		if strings.Contains(r.Spec, "http://") || strings.Contains(r.Spec, "https://") {
			t.Errorf("row %s cites a URL: %q", r.ID, r.Spec)
		}
	}
	if len(seen) < 40 {
		t.Errorf("only %d rows", len(seen))
	}
}

func TestSelect(t *testing.T) {
	rows := []Row{{ID: "a.one"}, {ID: "a.two"}, {ID: "b.one"}, {ID: "ping"}}
	for _, c := range []struct {
		checks []string
		want   []string
	}{
		{nil, []string{"a.one", "a.two", "b.one", "ping"}},
		{[]string{"b.one"}, []string{"b.one"}},
		{[]string{"a"}, []string{"a.one", "a.two"}},
		{[]string{"a.*"}, []string{"a.one", "a.two"}},
		{[]string{"*.one"}, []string{"a.one", "b.one"}},
		{[]string{"ping", "a.two", "a"}, []string{"a.one", "a.two", "ping"}},
	} {
		got, err := Select(rows, c.checks)
		if err != nil {
			t.Errorf("Select(%v): %v", c.checks, err)
			continue
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if diff := cmp.Diff(c.want, ids); diff != "" {
			t.Errorf("Select(%v) (-want +got):\n%s", c.checks, diff)
		}
	}
	if _, err := Select(rows, []string{"a.one", "nope"}); !errors.Is(err, ErrNoRows) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Select of an unknown check: %v, want ErrNoRows naming it", err)
	}
}

func tool(name, desc, schema, annotations string) session.Tool {
	t := session.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
	if annotations != "" {
		t.Annotations = json.RawMessage(annotations)
	}
	return t
}

func TestPickSlowTool(t *testing.T) {
	echo := tool("echo", "Echoes", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, "")
	for _, c := range []struct {
		name  string
		tools []session.Tool
		want  string // tool and args, "" for none
	}{
		{"milliseconds knob", []session.Tool{echo, tool("slow", "Sleeps", `{"type":"object","properties":{"milliseconds":{"type":"integer"}},"required":["milliseconds"]}`, "")},
			`slow {"milliseconds":2000}`},
		{"seconds knob and steps", []session.Tool{tool("trigger-long-running-operation", "progress updates", `{"type":"object","properties":{"duration":{"type":"number"},"steps":{"type":"number"}}}`, "")},
			`trigger-long-running-operation {"duration":2,"steps":4}`},
		{"maximum caps the knob", []session.Tool{tool("wait", "", `{"type":"object","properties":{"seconds":{"type":"integer","maximum":1}}}`, "")},
			`wait {"seconds":1}`},
		{"name beats description", []session.Tool{tool("streamer", "streams progress", `{"type":"object"}`, ""), tool("test_tool_with_progress", "", `{"type":"object"}`, "")},
			`test_tool_with_progress {}`},
		{"destructive skipped", []session.Tool{tool("slow_delete", "", `{"type":"object","properties":{"ms":{"type":"integer"}}}`, `{"destructiveHint":true}`)}, ""},
		{"other required argument", []session.Tool{tool("slow", "", `{"type":"object","properties":{"ms":{"type":"integer"},"path":{"type":"string"}},"required":["path"]}`, "")}, ""},
		{"nothing slow", []session.Tool{echo}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := PickSlowTool(c.tools)
			s := ""
			if ok {
				s = got.Tool + " " + string(got.Args)
			}
			if s != c.want {
				t.Errorf("PickSlowTool = %q (%s), want %q", s, got.Why, c.want)
			}
		})
	}
}

func TestEraLogClassifies(t *testing.T) {
	var l eraLog
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":3}`,
		`{"jsonrpc":"1.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":"x","message":"m"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`,
		`{`,
		`  "jsonrpc": "2.0",`,
		`}`,
		`Server listening on stdio`,
		`[{"jsonrpc":"2.0","id":6,"result":{}},{"jsonrpc":"2.0","id":7}]`,
	} {
		l.received(transport.Frame{Data: []byte(s)})
	}
	l.received(transport.Frame{Data: []byte("\xff"), Err: &transport.FrameError{Reason: "invalid-utf8"}})
	d := l.snapshot()
	got := map[string]int{"shape": d.shape.n, "fragments": d.fragments.n, "nonJSON": d.nonJSON.n, "badUTF8": d.badUTF8.n,
		"requests": len(d.requests), "notifications": len(d.notifications), "frames": d.frames}
	want := map[string]int{"shape": 6, "fragments": 3, "nonJSON": 1, "badUTF8": 1, "requests": 1, "notifications": 1, "frames": 15}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("era log (-want +got):\n%s\nshape: %v", diff, d.shape.items)
	}
}

func TestExcerpt(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        "plain",
		"a\nb\r\tc":    `a\nb\r` + "\tc",
		"caf\xe9\x01x": `caf\xe9\x01x`,
		"été":          "été",
	} {
		if got := excerpt([]byte(in)); got != want {
			t.Errorf("excerpt(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("x", excerptLen+10)
	if got := excerpt([]byte(long)); !strings.HasSuffix(got, "… (410 bytes)") || len(got) > excerptLen+20 {
		t.Errorf("excerpt of a long frame = %q", got)
	}
}

func TestParams(t *testing.T) {
	legacy := &Env{Target: Target{Era: session.EraLegacy}, Version: "2025-11-25"}
	stateless := &Env{Target: Target{Era: session.EraStateless}, Version: "2026-07-28"}
	for _, c := range []struct {
		e            *Env
		members, mm  string
		wantKeys     []string
		wantMetaKeys []string
	}{
		{legacy, "", "", nil, nil},
		{legacy, `"a":1`, `"progressToken":"t"`, []string{"_meta", "a"}, []string{"progressToken"}},
		{stateless, "", "", []string{"_meta"}, []string{"io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/protocolVersion"}},
		{stateless, `"a":1`, `"progressToken":"t"`, []string{"_meta", "a"}, []string{"io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/protocolVersion", "progressToken"}},
	} {
		raw := c.e.paramsMeta(c.members, c.mm)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("paramsMeta(%q, %q) = %s: %v", c.members, c.mm, raw, err)
		}
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(m["_meta"], &meta)
		if diff := cmp.Diff(c.wantKeys, sortedKeys(m)); diff != "" {
			t.Errorf("paramsMeta(%q, %q) = %s: keys (-want +got):\n%s", c.members, c.mm, raw, diff)
		}
		if diff := cmp.Diff(c.wantMetaKeys, sortedKeys(meta)); diff != "" {
			t.Errorf("paramsMeta(%q, %q) = %s: _meta keys (-want +got):\n%s", c.members, c.mm, raw, diff)
		}
	}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
