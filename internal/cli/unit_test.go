package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/session"
)

func TestExitCodeOf(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want ExitCode
	}{
		{"nil", bg, nil, ExitOK},
		{"explicit code", bg, &Error{Code: ExitConfig}, ExitConfig},
		{"wrapped explicit code", bg, fmt.Errorf("x: %w", &Error{Code: ExitFailure}), ExitFailure},
		{"crash", bg, &session.Error{Category: session.Crash}, ExitConnection},
		{"disconnected", bg, &session.Error{Category: session.Disconnected}, ExitConnection},
		{"timeout", bg, &session.Error{Category: session.Timeout}, ExitTimeout},
		{"hang", bg, &session.Error{Category: session.Hang}, ExitTimeout},
		{"deadlock", bg, &session.Error{Category: session.Deadlock}, ExitTimeout},
		{"server error", bg, &session.Error{Category: session.ServerError}, ExitRuntime},
		{"protocol error", bg, &session.Error{Category: session.ProtocolError}, ExitRuntime},
		{"malformed", bg, &session.Error{Category: session.Malformed}, ExitRuntime},
		{"cancelled", bg, &session.Error{Category: session.Cancelled}, ExitInterrupted},
		{"context canceled", bg, context.Canceled, ExitInterrupted},
		{"deadline", bg, context.DeadlineExceeded, ExitTimeout},
		{"plain error", bg, errors.New("boom"), ExitRuntime},
		{"after a signal anything is an interruption", cancelled, &session.Error{Category: session.Disconnected}, ExitInterrupted},
	}
	for _, tt := range tests {
		if got := exitCodeOf(tt.ctx, tt.err); got != tt.want {
			t.Errorf("%s: exitCodeOf = %d, want %d", tt.name, got, tt.want)
		}
	}
	// Every category has a code that is not success.
	for _, c := range session.Categories() {
		if exitCodeForCategory(c) == ExitOK {
			t.Errorf("category %s maps to exit 0", c)
		}
	}
}

func TestSchemaSummary(t *testing.T) {
	tests := []struct {
		schema string
		want   string
	}{
		{``, "-"},
		{`null`, "-"},
		{`{"type":"object"}`, "(none)"},
		{`{"type":"object","properties":{}}`, "(none)"},
		{`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"integer"}},"required":["z"]}`, "z: string, a?: integer"},
		{`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"number"}}}}`, "xs?: []number"},
		{`{"type":"object","properties":{"m":{"enum":["a","b"]}}}`, `m?: "a"|"b"`},
		{`{"type":"object","properties":{"n":{"type":["string","null"]}}}`, "n?: string|null"},
		{`{"type":"object","properties":{"u":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`, "u?: string|integer"},
		{`{"type":"object","properties":{"x":{}}}`, "x?: any"},
		{`{"type":"string"}`, "string"},
		{`{"properties":[1]}`, "(invalid schema)"},
		{`not json`, "(invalid schema)"},
	}
	for _, tt := range tests {
		if got := schemaSummary(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("schemaSummary(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	got, err := parseHeaders([]string{"Authorization=Bearer a=b", "X-Key: v:w", "x-key=2"})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{"Authorization": {"Bearer a=b"}, "X-Key": {"v:w", "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseHeaders mismatch (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"novalue", "=v", ":v", "a b=c", "K=line\nbreak"} {
		if _, err := parseHeaders([]string{bad}); err == nil {
			t.Errorf("parseHeaders(%q) accepted", bad)
		}
	}
}

func TestClosest(t *testing.T) {
	flags := []string{"server", "parallel", "timeout", "connect-timeout", "json-errors", "reporter"}
	tests := []struct{ in, want string }{
		{"sever", "server"},
		{"paralel", "parallel"},
		{"timout", "timeout"},
		{"conect-timeout", "connect-timeout"},
		{"jsn-errors", "json-errors"},
		{"reproter", "reporter"}, // a transposition counts once
		{"report", "reporter"},   // a prefix
		{"x", ""},
		{"verbose", ""},
		{"zzzzzzzz", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.in, flags); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactEntry(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Authorization Bearer s3cr3t", "Authorization ***"},
		{"API_TOKEN\ts3cr3t", "API_TOKEN\t***"},
		{"=s3cr3t", "=***"},
		{"Authorization: Bearer s3\ncr3t", "Authorization:***"},
		{"novalue", "novalue"},
	}
	for _, tt := range tests {
		if got := redactEntry(tt.in); got != tt.want {
			t.Errorf("redactEntry(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestReadArgs(t *testing.T) {
	tests := []struct {
		in, stdin string
		want      string
		wantErr   string
	}{
		{"", "", "{}", ""},
		{` {"a":1} `, "", `{"a":1}`, ""},
		{"-", `{"b":2}` + "\n", `{"b":2}`, ""},
		{"[1]", "", "", "must be a JSON object"},
		{"42", "", "", "must be a JSON object"},
		{`{"a":`, "", "", "is not valid JSON"},
		{"-", "", "", "--args - (stdin) is empty"},
		{"-", " \n\t", "", "--args - (stdin) is empty"},
		{"@/nonexistent/args.json", "", "", "read --args @/nonexistent/args.json"},
	}
	for _, tt := range tests {
		got, err := readArgs(context.Background(), tt.in, strings.NewReader(tt.stdin))
		if tt.wantErr != "" {
			var e *Error
			if !errors.As(err, &e) || e.Code != ExitConfig || !strings.Contains(e.Msg, tt.wantErr) {
				t.Errorf("readArgs(%q) error = %v, want a config error containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("readArgs(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestRunInProcess runs verbs through Run with in-memory streams.
func TestRunInProcess(t *testing.T) {
	tests := []struct {
		args       []string
		code       ExitCode
		stdout     string // substring
		stderrLine string // substring
	}{
		{[]string{"mcpspec", "version"}, ExitOK, "mcpspec version ", ""},
		{[]string{"mcpspec", "bogus"}, ExitConfig, "", `Error: unknown command "bogus"`},
		{[]string{"mcpspec", "call", "--server", "srv", "--server-env", "NOEQUALS", "t"}, ExitConfig, "", `--server-env "NOEQUALS" is not K=V`},
		{[]string{"mcpspec", "tools", "--server", "srv", "extra"}, ExitConfig, "", `unexpected argument "extra"`},
		{[]string{"mcpspec", "--json-errors", "tools"}, ExitConfig, "", `"exitCode":3`},
	}
	for _, tt := range tests {
		var out, errb strings.Builder
		code := Run(context.Background(), tt.args, &IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, TempDir: t.TempDir(), NoHistory: true})
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderrLine) {
			t.Errorf("Run(%q) = %d\nstdout: %s\nstderr: %s\nwant %d, stdout ⊇ %q, stderr ⊇ %q", tt.args, code, out.String(), errb.String(), tt.code, tt.stdout, tt.stderrLine)
		}
	}
}

// TestLoadGateNamesAgree keeps the names a collection's load.noGate accepts equal to the load
// engine's gates (collection sits below loadgen and cannot import them).
func TestLoadGateNamesAgree(t *testing.T) {
	want := []string{"all"}
	for _, g := range threshold.Gates() {
		want = append(want, g[0])
	}
	got := collection.LoadGates()
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("collection.LoadGates() differs from threshold.Gates() (-want +got):\n%s", diff)
	}
}
