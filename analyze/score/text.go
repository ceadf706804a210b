package score

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the score and the category totals; explain adds every check with its
// points, its reason and what failed.
func WriteText(w io.Writer, r *Result, explain bool) error {
	fmt.Fprintf(w, "MCP score %d / 100 (rubric %s)\n", r.Score, r.Rubric)
	if r.Cap != "" {
		fmt.Fprintf(w, "%s (%s before the cap)\n", capitalise(r.Cap), trim(r.Raw))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Categories {
		if c.Possible == 0 {
			fmt.Fprintf(tw, "%s\t-\tdoes not apply (%s)\n", c.Category, whyNot(r, c.Category))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s / %s\t\n", c.Category, trim(c.Earned), trim(c.Possible))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s of %s points earned, out of the %s that apply (of 100): %s%%\n", trim(r.Earned), trim(r.Possible), trim(r.Possible), trim(r.Raw))
	if !explain {
		return nil
	}
	fmt.Fprintln(w, "\nWhere every point went:")
	for _, cat := range Categories() {
		fmt.Fprintf(w, "\n%s\n", cat)
		for _, c := range r.Checks {
			if c.Category != cat {
				continue
			}
			if !c.Applies {
				fmt.Fprintf(w, "  %-40s  n/a  (%s points left out: %s)\n", c.ID, trim(c.Possible), c.Reason)
				continue
			}
			fmt.Fprintf(w, "  %-40s  %s / %s  %s\n", c.ID, trim(c.Earned), trim(c.Possible), c.Reason)
			writeItems(w, c.Items)
		}
	}
	return nil
}

// whyNot is the reason of the first check of a category (all of them do not apply).
func whyNot(r *Result, cat Category) string {
	for _, c := range r.Checks {
		if c.Category == cat {
			return c.Reason
		}
	}
	return ""
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeItems lists what a check found wanting: short names wrapped on comma-separated lines,
// longer items one per line.
func writeItems(w io.Writer, items []string) {
	short := true
	for _, it := range items {
		short = short && len(it) <= 40
	}
	if !short {
		for _, it := range items {
			fmt.Fprintf(w, "      %s\n", it)
		}
		return
	}
	line := ""
	for i, it := range items {
		if i < len(items)-1 {
			it += ","
		}
		if line != "" && len(line)+1+len(it) > 90 {
			fmt.Fprintf(w, "      %s\n", line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += it
	}
	if line != "" {
		fmt.Fprintf(w, "      %s\n", line)
	}
}
