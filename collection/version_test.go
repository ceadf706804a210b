package collection

import (
	"strings"
	"testing"
)

func TestServerProtocolVersion(t *testing.T) {
	ok := "name: v\nserver: {command: srv, protocolVersion: \"2025-06-18\"}\ntests:\n  - {name: e, call: echo}\n"
	c, err := Parse("v.yaml", []byte(ok), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[DefaultServerName].ProtocolVersion; got != "2025-06-18" {
		t.Errorf("ProtocolVersion = %q", got)
	}
	bad := "name: v\nserver: {command: srv, protocolVersion: \"2025-06-19\"}\ntests:\n  - {name: e, call: echo}\n"
	_, err = Parse("v.yaml", []byte(bad), nil)
	if err == nil || !strings.Contains(err.Error(), `v.yaml:2:`) || !strings.Contains(err.Error(), `unknown protocolVersion "2025-06-19"`) {
		t.Errorf("err = %v, want a positioned unknown protocolVersion error", err)
	}
}
