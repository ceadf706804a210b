package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/loadgen/rundir"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

func (a *app) compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "compare two test runs (results JSON files) or two load run directories and report regressions",
		UsageText: "mcpspec compare A.json B.json [--format text|markdown|json]\n" +
			"mcpspec compare --baseline NAME [B.json]   (B defaults to .mcpspec/runs/latest.json)\n" +
			"mcpspec compare RUNDIR_A RUNDIR_B          (two 'mcpspec load' run directories)\n\n" +
			"A is the reference, B the run under judgement. Results files are what the json reporter,\n" +
			"--save-baseline and every 'mcpspec test' (.mcpspec/runs/latest.json) write. Exit codes:\n" +
			"0 no regression · 1 B regressed against A · 3 a file cannot be read.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Usage: "compare with baseline `NAME` instead of a file A"},
			&cli.StringFlag{Name: "baseline-dir", Value: defaultBaselineDir, Usage: "where baselines live (`DIR`)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, markdown or json"},
			&cli.BoolFlag{Name: "ignore-latency", Usage: "do not compare latencies"},
		},
		Action: a.compare,
	}
}

func (a *app) compare(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	format := cmd.String("format")
	if format != "text" && format != "markdown" && format != "md" && format != "json" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --format %q", format), Hint: "use text, markdown or json"}
	}
	if len(args) == 2 && cmd.String("baseline") == "" && rundir.IsRunDir(args[0]) && rundir.IsRunDir(args[1]) {
		return a.compareLoad(cmd, args[0], args[1], format)
	}
	var base, cur *result.Run
	var baseName string
	var err error
	if name := cmd.String("baseline"); name != "" {
		if len(args) > 1 {
			return usageError(cmd, fmt.Errorf("with --baseline give at most one results file, got %d", len(args)))
		}
		if base, baseName, err = loadBaseline(cmd.String("baseline-dir"), name); err != nil {
			return baselineError(cmd.String("baseline-dir"), name, err)
		}
		if len(args) == 1 {
			cur, err = baseline.LoadFile(args[0])
			if err != nil {
				return runFileError(args[0], err)
			}
		} else if cur, err = baseline.LoadLatest("."); err != nil {
			return runFileError(baseline.LatestPath, err)
		}
	} else {
		if len(args) != 2 {
			return usageError(cmd, fmt.Errorf("want two results files A and B, got %d", len(args)))
		}
		baseName = args[0]
		if base, err = baseline.LoadFile(args[0]); err != nil {
			return runFileError(args[0], err)
		}
		if cur, err = baseline.LoadFile(args[1]); err != nil {
			return runFileError(args[1], err)
		}
	}
	diff := baseline.Compare(base, cur, &baseline.CompareOptions{IgnoreLatency: cmd.Bool("ignore-latency")})
	switch format {
	case "json":
		err = diff.WriteJSON(a.io.Stdout)
	case "markdown", "md":
		err = diff.WriteMarkdown(a.io.Stdout)
	default:
		err = diff.WriteText(a.io.Stdout)
	}
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if diff.Regressed() {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("regressed against %s", baseName),
			Hint: "the diff above lists each regression"}
	}
	return nil
}

// runFileError explains a results file (path) that cannot be used.
func runFileError(path string, err error) error {
	return &Error{Code: ExitConfig, Msg: runFileProblem(path, err), Err: err,
		Hint: "pass a file written by the json reporter, --save-baseline or 'mcpspec test' (.mcpspec/runs/latest.json)"}
}

// baselineError explains a baseline that cannot be used: a missing one lists those saved in dir.
func baselineError(dir, name string, err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	if !errors.Is(err, baseline.ErrNotFound) {
		path, _ := baselineFile(dir, name)
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("baseline %q cannot be used: %s", name, runFileProblem(path, err)), Err: err,
			Hint: fmt.Sprintf("save it again: mcpspec test … --save-baseline=%s (or mcpspec baseline save %s)", name, name)}
	}
	hint := fmt.Sprintf("save one first: mcpspec test … --save-baseline=%s (or mcpspec baseline save %s)", name, name)
	if entries, _ := listBaselines(dir); len(entries) > 0 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name
		}
		hint = withSuggestion(commandHintNames(name, names), "saved baselines: "+listNames(names, 20)+"; or "+hint)
	}
	return &Error{Code: ExitConfig, Msg: fmt.Sprintf("no baseline named %q in %s", name, dir), Hint: hint, Err: err}
}

// runFileProblem says in the user's terms why path is not a usable results document.
func runFileProblem(path string, err error) string {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, baseline.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s: no such file", path)
	case errors.As(err, &syn):
		return fmt.Sprintf("%s is not valid JSON (at byte %d: %s)", path, syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		where := "at the top"
		if typ.Field != "" {
			where = "in " + typ.Field
		}
		return fmt.Sprintf("%s is not an mcpspec results document: a JSON %s %s, where %s is expected", path, typ.Value, where, jsonKind(typ.Type))
	case errors.Is(err, io.EOF):
		return fmt.Sprintf("%s is empty", path)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("%s ends in the middle of a JSON value (cut short?)", path)
	case errors.Is(err, baseline.ErrSchemaVersion):
		return fmt.Sprintf("%s is not an mcpspec results document, or comes from a newer mcpspec (its schemaVersion is not %q)", path, result.SchemaVersion)
	case errors.As(err, new(*fs.PathError)):
		return fmt.Sprintf("cannot read %s: %v", path, serverconn.Innermost(err))
	}
	return fmt.Sprintf("cannot read %s: %v", path, err)
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another value"
}

// compareLoad compares two load run directories.
func (a *app) compareLoad(cmd *cli.Command, baseDir, curDir, format string) error {
	base, err := readRun(baseDir)
	if err != nil {
		return err
	}
	cur, err := readRun(curDir)
	if err != nil {
		return err
	}
	c := compareLoadRuns(baseDir, curDir, base, cur, cmd.Bool("ignore-latency"))
	switch format {
	case "json":
		err = writeJSON(a.io.Stdout, c)
	default:
		err = c.write(a.io.Stdout, format != "text")
	}
	if err != nil {
		return err
	}
	if c.Regressions > 0 {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("%s regressed against %s (%d metrics)", curDir, baseDir, c.Regressions), Quiet: true}
	}
	return nil
}
