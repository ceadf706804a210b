package cli

import (
	"fmt"
	"io"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// printFindings warns about findings on w (stderr): they are bugs of the server even when the
// command succeeded.
func printFindings(w io.Writer, fs []session.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "Warning: the server sent %s that answered no request:\n", textfmt.Plural(len(fs), "message"))
	for _, f := range fs {
		fmt.Fprintf(w, "  %s: %s\n", f.Category, serverconn.OneLine(f.Message))
		if len(f.Frame) > 0 {
			fmt.Fprintf(w, "    frame: %s\n", truncate(serverconn.OneLine(string(f.Frame)), 200))
		}
	}
	fmt.Fprintln(w, "Hint: a bug in the server (a second answer, an id never issued, a frame nobody waited for); 'mcpspec test --strict' fails the tests it happens in")
}

// findingJSON is a finding in --json output.
type findingJSON struct {
	Category session.Category `json:"category"`
	Message  string           `json:"message"`
	Frame    string           `json:"frame,omitempty"`
}

func findingsJSON(fs []session.Finding) []findingJSON {
	var out []findingJSON
	for _, f := range fs {
		out = append(out, findingJSON{Category: f.Category, Message: f.Message, Frame: string(f.Frame)})
	}
	return out
}
