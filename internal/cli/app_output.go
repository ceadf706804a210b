package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// jsonOutcome ends the --json document of a verb: its exit code and, when the verb failed, the
// fields of [failureJSON] at the top level of the document.
type jsonOutcome struct {
	ExitCode ExitCode `json:"exitCode"`
	*failureJSON
}

func (o *jsonOutcome) outcome() *jsonOutcome { return o }

// withOutcome is a --json document that embeds a [jsonOutcome].
type withOutcome interface{ outcome() *jsonOutcome }

// writeJSONOutcome is the end of every verb whose --json document embeds a [jsonOutcome]: it
// records err in doc (the exit code err maps to and, unless explained — the document says why
// itself, as a tool error's result does — the failure), writes doc, and returns err, or the
// write's error when err is nil.
func writeJSONOutcome(ctx context.Context, w io.Writer, doc withOutcome, err error, explained bool) error {
	o := doc.outcome()
	o.ExitCode = exitCodeOf(ctx, err)
	if err != nil && !explained {
		o.failureJSON = newFailureJSON(err)
	}
	if werr := writeJSON(w, doc); err == nil {
		err = werr
	}
	return err
}

// documentVerb is the action of a verb that takes no argument and fills a --json document of
// type D as run goes: with --json the document is written whether run failed or not.
func documentVerb[D any, P interface {
	*D
	withOutcome
}](a *app, run func(ctx context.Context, cmd *cli.Command, f serverFlags, out P) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		if cmd.Args().Present() {
			return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
		}
		f := readServerFlags(cmd)
		var out D
		err := run(ctx, cmd, f, &out)
		if k, ok := any(P(&out)).(keptDocument); ok {
			if figs, ran := k.runFigures(); ran {
				o := P(&out).outcome()
				saved := *o
				o.ExitCode = exitCodeOf(ctx, err)
				if err != nil {
					o.failureJSON = newFailureJSON(err)
				}
				a.keepRun(cmd.Name, f.Server, jsonBytes(P(&out)), figs)
				*o = saved
			}
		}
		if f.JSON {
			return writeJSONOutcome(ctx, a.io.Stdout, P(&out), err, false)
		}
		return err
	}
}

// keptDocument is a --json document of a verb whose runs the history keeps ([app.keepRun]).
type keptDocument interface {
	// runFigures returns the run's key figures (keys history.Figure…); ran is false when the
	// verb stopped before it ran anything (bad flags), and then nothing is kept.
	runFigures() (figures map[string]float64, ran bool)
}

// prettyJSON indents raw JSON; invalid JSON is returned as is.
func prettyJSON(raw []byte, indent string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, indent, "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// truncate cuts s to n runes, marking the cut with "…", and keeps only its first line.
func truncate(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// table writes rows aligned in columns; the first row is the header. Cells are printed
// [textfmt.Clean]: a server's names and descriptions drive no terminal.
func table(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		for i := range r {
			r[i] = textfmt.Clean(strings.NewReplacer("\t", " ", "\n", " ").Replace(r[i]))
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// schemaSummary renders an object schema's properties in order as "a: string, b?: integer"
// (? marks an optional property). It never fails: odd schemas are summarized as best it can.
func schemaSummary(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return "-"
	}
	var top struct {
		Type       any             `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return "(invalid schema)"
	}
	props, err := orderedProps(top.Properties)
	if err != nil {
		return "(invalid schema)"
	}
	if len(props) == 0 {
		if t := typeName(top.Type); t != "" && t != "object" {
			return t
		}
		return "(none)"
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	parts := make([]string, 0, len(props))
	for _, p := range props {
		name := p.name
		if !required[name] {
			name += "?"
		}
		parts = append(parts, name+": "+propType(p.schema))
	}
	return strings.Join(parts, ", ")
}

type prop struct {
	name   string
	schema json.RawMessage
}

// orderedProps returns the members of a JSON object in the order they were written.
func orderedProps(raw json.RawMessage) ([]prop, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("properties is not an object")
	}
	var props []prop
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		props = append(props, prop{key, v})
	}
	return props, nil
}

func propType(raw json.RawMessage) string {
	var s struct {
		Type  any   `json:"type"`
		Enum  []any `json:"enum"`
		Items *struct {
			Type any `json:"type"`
		} `json:"items"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "?"
	}
	switch {
	case len(s.Enum) > 0:
		vals := make([]string, 0, len(s.Enum))
		for _, v := range s.Enum {
			b, _ := json.Marshal(v)
			vals = append(vals, string(b))
		}
		return truncate(strings.Join(vals, "|"), 40)
	case typeName(s.Type) == "array" && s.Items != nil && typeName(s.Items.Type) != "":
		return "[]" + typeName(s.Items.Type)
	case typeName(s.Type) != "":
		return typeName(s.Type)
	case len(s.AnyOf)+len(s.OneOf) > 0:
		alts := append(s.AnyOf, s.OneOf...)
		names := make([]string, 0, len(alts))
		for _, a := range alts {
			names = append(names, propType(a))
		}
		return strings.Join(names, "|")
	}
	return "any"
}

func typeName(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
		return strings.Join(names, "|")
	}
	return ""
}

// content is the union of the content block kinds of a tool result or a resource read.
type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Blob     string `json:"blob"`
	Resource *struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     string  `json:"blob"`
	} `json:"resource"`
}

// printContent prints content blocks: text plainly, everything else as a one-line summary.
// What the server wrote is printed [textfmt.Clean].
func printContent(w io.Writer, blocks []json.RawMessage) {
	w = cleanWriter{w}
	for _, raw := range blocks {
		var c content
		if err := json.Unmarshal(raw, &c); err != nil {
			fmt.Fprintf(w, "[unreadable content block: %s]\n", truncate(string(raw), 80))
			continue
		}
		switch c.Type {
		case "text":
			fmt.Fprint(w, c.Text)
			if !strings.HasSuffix(c.Text, "\n") {
				fmt.Fprintln(w)
			}
		case "image", "audio":
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, orDash(c.MimeType), base64Size(c.Data))
		case "resource_link":
			fmt.Fprintf(w, "[resource_link %s %s%s]\n", orDash(c.Name), c.URI, mime(c.MimeType))
		case "resource":
			if c.Resource == nil {
				fmt.Fprintln(w, "[resource without a resource member]")
				continue
			}
			fmt.Fprintf(w, "[resource %s%s", c.Resource.URI, mime(c.Resource.MimeType))
			if c.Resource.Text != nil {
				fmt.Fprintf(w, "]\n%s", *c.Resource.Text)
				if !strings.HasSuffix(*c.Resource.Text, "\n") {
					fmt.Fprintln(w)
				}
			} else {
				fmt.Fprintf(w, ", %d bytes]\n", base64Size(c.Resource.Blob))
			}
		default:
			fmt.Fprintf(w, "[%s content: %s]\n", orDash(c.Type), truncate(string(raw), 80))
		}
	}
}

// cleanWriter writes through [textfmt.Clean]: each Write whole, as the fmt calls that use it
// write each value in one Write.
type cleanWriter struct{ w io.Writer }

func (c cleanWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, textfmt.Clean(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// printToolResult prints a tools/call result for a person.
func printToolResult(w io.Writer, res *session.ToolResult) {
	printContent(w, res.Content)
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		fmt.Fprintf(w, "structuredContent:\n%s\n", prettyJSON(res.StructuredContent, ""))
	}
	if len(res.Content) == 0 && len(res.StructuredContent) == 0 {
		fmt.Fprintln(w, "(empty result)")
	}
}

func base64Size(s string) int {
	s = strings.TrimRight(s, "=")
	return len(s) * 3 / 4
}

func mime(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
