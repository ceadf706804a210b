package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/mcptest"
)

// TestProbeJSONFollowsSchema checks probe --json against schema/probe.v1.json: a clean run, a
// failed row and a server that cannot be reached, each with its exit code.
func TestProbeJSONFollowsSchema(t *testing.T) {
	sch := schematest.Compile(t, "probe.v1.json")
	good := mcptest.NewTCPServer(nil)
	defer good.Close()
	sloppy := mcptest.NewTCPServer(&mcptest.Options{SloppyJSONRPC: true})
	defer sloppy.Close()
	for _, c := range []struct {
		name   string
		args   []string
		code   ExitCode
		expect string
	}{
		{"clean", []string{"--server", good.URL(), "--check", "jsonrpc.method-not-found"}, ExitOK, `"status": "pass"`},
		{"failed row", []string{"--server", sloppy.URL(), "--check", "jsonrpc.method-not-found"}, ExitFailure, `"status": "fail"`},
		{"unreachable", []string{"--server", "tcp://127.0.0.1:1", "--check", "ping", "--connect-timeout", "2s"}, ExitConnection, `"category": "Disconnected"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code := Run(ctx, append([]string{"mcpspec", "probe", "--json"}, c.args...), &IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, TempDir: t.TempDir(), NoHistory: true})
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errb.String())
			}
			if !strings.Contains(out.String(), c.expect) {
				t.Errorf("stdout lacks %s:\n%s", c.expect, out.String())
			}
			if err := schematest.Validate(t, sch, out.Bytes()); err != nil {
				t.Errorf("probe --json does not follow probe.v1.json: %v\n%s", err, out.String())
			}
			// The schema is a real check: a verdict it does not know is refused.
			bad := strings.Replace(out.String(), `"exitCode": `, `"exitCode": 9`, 1)
			if schematest.Validate(t, sch, []byte(bad)) == nil {
				t.Error("probe.v1.json accepts exit code 9x")
			}
		})
	}
}
