package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"
	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session/recording"
)

func (a *app) recordToCollectionCommand() *cli.Command {
	return &cli.Command{
		Name:      "to-collection",
		Usage:     "write a collection with one test per recorded tools/call, asserting the recorded answer",
		ArgsUsage: "NAME",
		UsageText: "mcpspec record to-collection NAME [-o FILE] [--force]\n\n" +
			"Each test calls the tool with the recorded arguments and asserts isError as recorded and\n" +
			"the recorded structuredContent (or, without one, content) as an equality. The server is\n" +
			"the variable server, by default the recorded SPEC: --var server=SPEC points the tests\n" +
			"elsewhere, such as at mcpspec mock NAME.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the collection to `FILE` (default: NAME.mcpspec.yaml; - for stdout)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite FILE if it exists"},
			dirFlag(),
		},
		Action: a.recordToCollection,
	}
}

// collectedTest is one test of a collection written from a recording.
type collectedTest struct {
	Name       string           `yaml:"name"`
	Tool       string           `yaml:"tool"`
	Input      any              `yaml:"input,omitempty"`
	Assertions []map[string]any `yaml:"assertions"`
}

// writtenCollection is the collection record to-collection writes.
type writtenCollection struct {
	SchemaVersion string            `yaml:"schemaVersion"`
	Name          string            `yaml:"name"`
	Variables     map[string]string `yaml:"variables"`
	Server        string            `yaml:"server"`
	Tests         []collectedTest   `yaml:"tests"`
}

func (a *app) recordToCollection(ctx context.Context, cmd *cli.Command) error {
	name, rec, err := loadRecording(cmd)
	if err != nil {
		return err
	}
	tests, skipped := collectTests(rec)
	if len(tests) == 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("recording %s has no answered tools/call to turn into a test", name),
			Hint: "record a session that calls tools: mcpspec proxy --server SPEC"}
	}
	c := writtenCollection{
		SchemaVersion: "1.0",
		Name:          collection.EscapeTemplate("recording " + name),
		Variables:     map[string]string{"server": collection.EscapeTemplate(rec.Header.Server)},
		Server:        "{{server}}",
		Tests:         tests,
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by mcpspec record to-collection from the recording %s.\n", name)
	fmt.Fprintf(&b, "# Run it against another server with: mcpspec test FILE --var server=SPEC\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot write the collection", Err: err}
	}
	out := cmd.String("output")
	if out == "" {
		out = name + ".mcpspec.yaml"
	}
	if out == "-" {
		_, err := a.io.Stdout.Write(b.Bytes())
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if cmd.Bool("force") {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	if dir := filepath.Dir(out); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &Error{Code: ExitRuntime, Msg: "cannot create the collection's directory: " + err.Error(), Err: err}
		}
	}
	f, err := os.OpenFile(out, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return &Error{Code: ExitConfig, Msg: out + " exists already", Hint: "pass --force to overwrite it, or -o another FILE"}
	}
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot write the collection: " + err.Error(), Err: err}
	}
	// Recorded frames were masked; the collection is masked again, like every file we write.
	if _, err := f.Write([]byte(a.masker.Mask(b.String()))); err != nil {
		f.Close()
		return &Error{Code: ExitRuntime, Msg: "cannot write the collection: " + err.Error(), Err: err}
	}
	if err := f.Close(); err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot write the collection: " + err.Error(), Err: err}
	}
	fmt.Fprintf(a.io.Stdout, "wrote %s: %d tests from recording %s", out, len(tests), name)
	if skipped > 0 {
		fmt.Fprintf(a.io.Stdout, " (%d tools/call skipped: unanswered, or not writable exactly)", skipped)
	}
	fmt.Fprintln(a.io.Stdout)
	return nil
}

// collectTests makes one test per answered tools/call of rec, in the recorded order; skipped
// counts those left out (unanswered, or answered with a JSON-RPC error).
func collectTests(rec *recording.Recording) (tests []collectedTest, skipped int) {
	type call struct {
		tool   string
		args   any
		answer []byte
	}
	var calls []call
	pending := map[string]int{} // request id → index in calls
	for _, e := range rec.Entries {
		var f struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if len(e.Frame) == 0 || json.Unmarshal(e.Frame, &f) != nil || len(f.ID) == 0 {
			continue
		}
		key := string(f.ID)
		switch {
		case e.Dir == recording.ClientToServer && f.Method == "tools/call":
			var args any
			if len(f.Params.Arguments) > 0 {
				_ = json.Unmarshal(f.Params.Arguments, &args)
			}
			pending[key] = len(calls)
			calls = append(calls, call{tool: f.Params.Name, args: args})
		case e.Dir == recording.ServerToClient && f.Method == "":
			if i, ok := pending[key]; ok {
				calls[i].answer = e.Frame
				delete(pending, key)
			}
		}
	}
	for _, c := range calls {
		t := testOf(c.tool, c.args, c.answer, len(tests))
		if c.answer == nil || t.Assertions == nil {
			skipped++
			continue
		}
		tests = append(tests, t)
	}
	return tests, skipped
}

// testOf is the test of one recorded tools/call and its answer; no assertions when the answer
// is no tool result (a JSON-RPC error).
func testOf(tool string, args any, answer []byte, n int) collectedTest {
	t := collectedTest{
		Name:  collection.EscapeTemplate(fmt.Sprintf("%s #%d (recorded)", tool, n+1)),
		Tool:  collection.EscapeTemplate(tool),
		Input: escapeStrings(args),
	}
	var a struct {
		Result *struct {
			Content           any  `json:"content"`
			StructuredContent any  `json:"structuredContent"`
			IsError           bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Result == nil {
		return t
	}
	t.Assertions = append(t.Assertions, map[string]any{"type": "isError", "value": a.Result.IsError})
	if a.Result.StructuredContent != nil {
		t.Assertions = append(t.Assertions, map[string]any{"type": "equals", "path": "$.structuredContent", "value": escapeStrings(a.Result.StructuredContent)})
	} else {
		t.Assertions = append(t.Assertions, map[string]any{"type": "equals", "path": "$.content", "value": escapeStrings(a.Result.Content)})
	}
	return t
}

// escapeStrings escapes every string in v (keys included) so that a collection reads it back
// as written: a server's {{…}} must not become a template.
func escapeStrings(v any) any {
	switch x := v.(type) {
	case string:
		return collection.EscapeTemplate(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escapeStrings(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[collection.EscapeTemplate(k)] = escapeStrings(e)
		}
		return out
	}
	return v
}
