package probe

import (
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session"
)

// TestWriteTextShowsNoEscape: a row's message and evidence quote the server (its name, its
// frames): the text report shows no terminal escape, BEL or CR of it.
func TestWriteTextShowsNoEscape(t *testing.T) {
	const osc52 = "\x1b]52;c;cm0gLXJmIH4vCg==\x07"
	rep := &Report{
		Server:     "srv",
		ServerInfo: &session.Implementation{Name: "srv\x1b]0;pwned\x07", Version: "1\rPASS"},
		Results: []Result{{ID: "jsonrpc.x", Title: "t", Status: Fail, Message: "answered " + osc52 + "\rpass",
			Evidence: []Evidence{{Dir: dirReceived, Text: `{"error":{"message":"` + osc52 + `"}}`}}}},
	}
	var b strings.Builder
	if err := rep.WriteText(&b, nil); err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexAny(b.String(), "\x1b\x07\r"); i >= 0 {
		t.Errorf("the report shows a control character at %d: %q", i, b.String())
	}
}
