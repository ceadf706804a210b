package collection

import (
	"strings"
	"testing"
	"time"
)

func TestProbeBlock(t *testing.T) {
	c, err := Parse("p.yaml", []byte(`
servers: {a: {command: srv}, b: {url: "http://127.0.0.1:1/mcp"}}
defaults: {server: a}
probe: {checks: [http, "jsonrpc.*"], timeout: 3s, server: b, strict: true, slowTool: slow, slowInput: {milliseconds: 100}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Probe
	if p.Server != "b" || !p.Strict || p.SlowTool != "slow" || p.SlowInput["milliseconds"] == nil || p.Timeout != 3*time.Second || len(p.Checks) != 2 {
		t.Errorf("probe = %+v", p)
	}
	for doc, want := range map[string]string{
		`probe: {strict: maybe}`:    "probe.strict",
		`probe: {slowInput: [1]}`:   "probe.slowInput",
		`probe: {server: ""}`:       "probe.server",
		`probe: {unknownKey: true}`: "unknownKey",
	} {
		_, err := Parse("p.yaml", []byte("server: srv\n"+doc+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", doc, err, want)
		}
	}
}
