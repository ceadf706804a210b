package probe

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

// TextOptions tunes [Report.WriteText].
type TextOptions struct {
	// Verbose lists the n/a rows too, and the evidence of every row, not only of the rows
	// that failed or warned.
	Verbose bool
}

// messageWidth bounds the message column of the matrix.
const messageWidth = 90

// WriteText writes the report for a terminal: the server and its eras, the matrix, then each
// failure and warning with what it checks and its evidence, then the tally.
func (r *Report) WriteText(w io.Writer, o *TextOptions) error {
	if o == nil {
		o = &TextOptions{}
	}
	var b strings.Builder
	name := r.Server
	if r.ServerInfo != nil && r.ServerInfo.Name != "" {
		name = strings.TrimSpace(r.ServerInfo.Name + " " + r.ServerInfo.Version)
	}
	fmt.Fprintf(&b, "Conformance of %s over %s\n", name, transportName(r.Transport))
	for _, e := range r.Eras {
		if e.Spoken {
			fmt.Fprintf(&b, "  %s: spoken, probed at %s\n", eraName(e.Era), e.Version)
		} else {
			fmt.Fprintf(&b, "  %s: not spoken (%s)\n", eraName(e.Era), e.Reason)
		}
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VERDICT\tROW\tERA\tFINDING")
	hidden := 0
	for _, res := range r.Results {
		if res.Status == NotApplicable && !o.Verbose {
			hidden++
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", verdict(res.Status), res.ID, eraColumn(res), oneLine(res.Message, messageWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "(%s not applicable to this server; --verbose lists them)\n", textfmt.Plural(hidden, "row"))
	}
	for _, res := range r.Results {
		if !o.Verbose && res.Status != Fail && res.Status != Warn {
			continue
		}
		fmt.Fprintf(&b, "\n%s %s", verdict(res.Status), res.ID)
		if res.Version != "" {
			fmt.Fprintf(&b, " (%s)", res.Version)
		}
		fmt.Fprintf(&b, " — %s\n  %s\n  checks: %s\n", res.Title, res.Message, res.Spec)
		for _, ev := range res.Evidence {
			fmt.Fprintf(&b, "  %s %s\n", arrow(ev.Dir), ev.Text)
		}
	}
	c := r.Counts
	fmt.Fprintf(&b, "\n%d pass · %d warn · %d fail · %d n/a in %s", c.Pass, c.Warn, c.Fail, c.NotApplicable, textfmt.Duration(r.Duration))
	if r.Strict {
		b.WriteString(" (strict: a warning fails)")
	}
	b.WriteString("\n")
	// Messages and evidence quote the server: no terminal escape of it reaches the terminal.
	_, err := io.WriteString(w, textfmt.Clean(b.String()))
	return err
}

// WriteList writes the table of rows: id, where it applies, title and the section it checks.
func WriteList(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tTITLE\tCHECKS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Title, r.Spec)
	}
	return tw.Flush()
}

func verdict(s Status) string {
	switch s {
	case Pass:
		return "pass"
	case Warn:
		return "WARN"
	case Fail:
		return "FAIL"
	}
	return "n/a"
}

func eraColumn(r Result) string {
	switch r.Era {
	case "":
		return "-"
	case session.EraStateless:
		return "stateless " + r.Version
	}
	return "handshake " + r.Version
}

func arrow(dir string) string {
	switch dir {
	case dirSent:
		return "→"
	case dirReceived:
		return "←"
	}
	return "·"
}

// oneLine folds s onto one line (each run of white space, line breaks included, becomes one
// space: a server's multi-line error message stays readable) and cuts it to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
