package tokens

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// WriteText writes r as a table, heaviest tools first, then the totals, the share of each
// context window, and d (nil: no comparison) against the report named against.
func WriteText(w io.Writer, r *Report, d *Diff, against string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Tool definitions in %s tokens: %s.\n", r.Encoding, r.Note)
	if !r.Exact {
		fmt.Fprintln(w, "Some text was too unusual to count exactly (a long run of one character): the counts may be off by a few tokens.")
	}
	fmt.Fprintln(w)
	width := len("TOOL")
	for _, t := range r.Tools {
		width = max(width, utf8.RuneCountInString(printable(t.Tool)))
	}
	fmt.Fprintln(tw, "TOOL"+strings.Repeat(" ", width-4)+"\tFULL\tCORE\tNAME\tDESCRIPTION\tSCHEMA\tSTRUCTURE\tEXTRAS\tBYTES\t")
	row := func(name string, c Cost) {
		name += strings.Repeat(" ", max(0, width-utf8.RuneCountInString(name)))
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", name, c.Full, c.Core, c.Name, c.Description, c.Schema, c.Structure, c.Extras, c.Bytes)
	}
	for _, t := range r.Tools {
		row(printable(t.Tool), t.Cost)
	}
	row("total", r.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	var shares []string
	for _, win := range r.Windows {
		shares = append(shares, fmt.Sprintf("%s %s%% (core %s%%)", win.Name, pct(win.Full), pct(win.Core)))
	}
	fmt.Fprintf(w, "Share of a context window: %s\n", strings.Join(shares, " · "))
	if heaviest := heaviestExtras(r); heaviest != "" {
		fmt.Fprintf(w, "Largest extras: %s\n", heaviest)
	}
	if d == nil {
		return nil
	}
	fmt.Fprintf(w, "\nAgainst %s: full %d → %d (%s), core %d → %d (%s)\n", against, d.FullBefore, d.FullAfter, signed(d.FullAfter-d.FullBefore), d.CoreBefore, d.CoreAfter, signed(d.CoreAfter-d.CoreBefore))
	if len(d.Changes) == 0 {
		_, err := fmt.Fprintln(w, "No tool changed.")
		return err
	}
	for _, c := range d.Changes {
		fmt.Fprintf(w, "  %-8s %s: full %d → %d (%s), core %d → %d\n", c.Status, printable(c.Tool), c.FullBefore, c.FullAfter, signed(c.FullDelta()), c.CoreBefore, c.CoreAfter)
	}
	return nil
}

// heaviestExtras names the three largest extra members across all tools, as "tool.field N".
func heaviestExtras(r *Report) string {
	type fc struct {
		name string
		n    int
	}
	var all []fc
	for _, t := range r.Tools {
		for _, f := range t.Fields {
			all = append(all, fc{printable(t.Tool) + "." + printable(f.Field), f.Tokens})
		}
	}
	// Stable: tools are already in report order, fields heaviest first.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].n > all[j-1].n; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	var out []string
	for i := 0; i < len(all) && i < 3; i++ {
		out = append(out, fmt.Sprintf("%s %d", all[i].name, all[i].n))
	}
	return strings.Join(out, ", ")
}

func pct(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// printable shows control and invisible characters of a server-chosen name as \u escapes, so
// they can neither break the table nor hide.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) && r != '\t' {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04X", r)
	}
	return b.String()
}
