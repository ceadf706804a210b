package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// This file holds what the detector verbs (deadlock, race, head-of-line) share: their flags,
// the run under --max-time, the JSON document and the exit code of a verdict.

// defaultMaxTime bounds a detector run.
const defaultMaxTime = 10 * time.Minute

// detectorFlagDefs are the server flags of a detector verb (its own hang detector replaces
// --hang-threshold) plus --max-time, --quiet and --explain.
func detectorFlagDefs(extra ...cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range serverFlagDefs() {
		if slices.Contains(f.Names(), "hang-threshold") {
			continue
		}
		out = append(out, f)
	}
	out = append(out, extra...)
	return append(out,
		&durationFlag{Name: "max-time", Value: defaultMaxTime, Usage: "stop after `D` and report what was found so far"},
		quietFlag(),
		explainFlag(),
	)
}

// detectorArgs reads an --args-like flag: nil when not given (the detector makes the
// arguments up from the tool's inputSchema), else a JSON object.
func detectorArgs(ctx context.Context, name, v string, stdin io.Reader) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	raw, err := readObjectFlag(ctx, name, v, stdin)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--%s: %v", name, err), Err: err}
	}
	return m, nil
}

// atLeast checks that an integer flag is within [lo, hi].
func atLeast(cmd *cli.Command, name string, lo, hi int) error {
	if v := cmd.Int(name); v < lo || v > hi {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--%s must be between %d and %d, got %d", name, lo, hi, v), Hint: "leave it out for the default"}
	}
	return nil
}

// positiveDuration checks that a duration flag is positive.
func positiveDuration(cmd *cli.Command, names ...string) error {
	for _, n := range names {
		if d := cmd.Duration(n); d <= 0 {
			return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--%s must be positive, got %s", n, d), Hint: "leave it out for the default"}
		}
	}
	return nil
}

// runDetector prepares the server, runs fn under --max-time and turns a failure to carry the
// detector out into the CLI's error; fn returns its verdict's error itself (see
// [verdictError]). The temporary stderr file stays only when a hint points at it.
func (a *app) runDetector(ctx context.Context, f serverFlags, verb string, maxTime time.Duration, fn func(ctx context.Context, t *target) (verdict, err error)) (err error) {
	t, err := a.prepare(f, verb)
	if err != nil {
		return err
	}
	keep := false
	defer func() { t.finish(keep) }()
	rctx, cancel := context.WithTimeoutCause(ctx, maxTime, fmt.Errorf("--max-time %s passed", maxTime))
	defer cancel()
	verdict, err := fn(rctx, t)
	if err == nil {
		return verdict
	}
	keep = true
	var ute *detect.UnknownToolError
	var se *serverconn.Error
	switch {
	case errors.As(err, &ute):
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "available: " + listNames(ute.Available, 20), Err: err}
	case errors.As(err, &se):
		return t.connectError(ctx, err)
	case ctx.Err() != nil:
		return err
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	return fromServerconn(err)
}

// runDetectorVerb runs a detector verb: run with opts under [app.runDetector] (prog, nil when
// quiet, shows its steps until it returns), its report as
// text unless --json, then verdict's error (see [verdictError]); with --json, the report's
// JSON document (see [writeDetectorJSON]), written whether or not the run could be carried out.
func runDetectorVerb[O any, R detect.Report](ctx context.Context, a *app, f serverFlags, verb string, maxTime time.Duration,
	prog *phases, run detect.RunFunc[O, R], opts *O, verdict func(R) error) error {
	var rep detect.Report
	err := a.runDetector(ctx, f, verb, maxTime, func(ctx context.Context, t *target) (error, error) {
		r, err := run(ctx, t.op, opts)
		prog.done()
		if err != nil {
			return nil, err
		}
		rep = r
		if !f.JSON {
			if werr := r.WriteText(a.io.Stdout); werr != nil {
				return nil, werr
			}
		}
		return verdict(r), nil
	})
	if rep != nil || exitCodeOf(ctx, err) != ExitConfig {
		var doc bytes.Buffer
		if writeDetectorJSON(&doc, ctx, transportOf(f), rep, err) == nil {
			a.keepRun(verb, f.Server, doc.Bytes(), testsFigures(rep))
		}
	}
	if f.JSON {
		if werr := writeDetectorJSON(a.io.Stdout, ctx, transportOf(f), rep, err); err == nil {
			err = werr
		}
	}
	return err
}

// writeDetectorJSON writes report (a detector's JSON object, its members in their order; nil
// when the run could not be carried out) with transport and exitCode added, and the
// failure's fields when the run failed.
func writeDetectorJSON(w io.Writer, ctx context.Context, transport string, report detect.Report, err error) error {
	var extra [][2]any
	if transport != "" {
		extra = append(extra, [2]any{"transport", transport})
	}
	extra = append(extra, [2]any{"exitCode", exitCodeOf(ctx, err)})
	if err != nil {
		f := newFailureJSON(err)
		if f.Category != "" {
			extra = append(extra, [2]any{"category", f.Category})
		}
		if f.Code != 0 {
			extra = append(extra, [2]any{"code", f.Code})
		}
		extra = append(extra, [2]any{"message", f.Message})
		if f.Hint != "" {
			extra = append(extra, [2]any{"hint", f.Hint})
		}
	}
	obj := []byte("{}")
	if report != nil {
		var err error
		if obj, err = marshalPlain(report); err != nil {
			return fmt.Errorf("encode JSON output: %w", err)
		}
	}
	var b bytes.Buffer
	b.Write(bytes.TrimSuffix(obj, []byte("}")))
	for i, kv := range extra {
		if i > 0 || len(obj) > 2 {
			b.WriteByte(',')
		}
		k, _ := marshalPlain(kv[0])
		v, err := marshalPlain(kv[1])
		if err != nil {
			return fmt.Errorf("encode JSON output: %w", err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("encode JSON output: %w", err)
	}
	out.WriteByte('\n')
	_, werr := w.Write(out.Bytes())
	return werr
}

// marshalPlain encodes v without escaping <, > and &.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// verdictError is the error of a detector verdict: a bug found is exit 1, a run stopped by
// --max-time before it could tell is exit 5, one that could not tell is exit 2.
func verdictError(found bool, what, diagnosis string, incomplete bool, inconclusive string) error {
	switch {
	case found:
		return &Error{Code: ExitFailure, Msg: what + ": " + diagnosis, Hint: "the report above has the evidence; --json has every call"}
	case incomplete:
		return &Error{Code: ExitTimeout, Msg: "stopped before the end, nothing found so far: " + diagnosis,
			Hint: "raise --max-time, or probe less at once (--tool, --concurrency)"}
	case inconclusive != "":
		// The calls given cannot decide: bad input (docs/exit-codes.md), not a runtime error.
		return &Error{Code: ExitConfig, Msg: "inconclusive: " + inconclusive, Hint: "pick a slow call that takes at least 20ms and 10× the fast one (--slow-args)"}
	}
	return nil
}

// resolveInfo resolves the SPEC of f without starting anything.
func resolveInfo(f serverFlags) (spec.Info, error) {
	return spec.Resolve(f.Server, &spec.Options{Transport: spec.Transport(f.Transport)})
}

// hangAfterAlias is the hidden --hang-threshold of the verbs whose own hang detector is
// --hang-after (deadlock, fuzz): the session verbs' name for the same idea, accepted with a
// warning so that one name shows per verb.
func hangAfterAlias() cli.Flag {
	return &durationFlag{Name: "hang-threshold", Hidden: true, Usage: "deprecated here: use --hang-after `D`"}
}

// hangAfter reads --hang-after, or its alias --hang-threshold (with a warning); giving both is a
// config error. The session's own hang detector stays off: f.HangThreshold is cleared.
func (a *app) hangAfter(cmd *cli.Command, f *serverFlags) (time.Duration, error) {
	f.HangThreshold = 0
	if !cmd.IsSet("hang-threshold") {
		return cmd.Duration("hang-after"), nil
	}
	if cmd.IsSet("hang-after") {
		return 0, &Error{Code: ExitConfig, Msg: "--hang-threshold and --hang-after are the same flag here; give one",
			Hint: fmt.Sprintf("e.g. mcpspec %s --hang-after %s", cmd.Name, cmd.Duration("hang-after"))}
	}
	fmt.Fprintf(a.io.Stderr, "warning: --hang-threshold is now --hang-after on %s; --hang-threshold will be removed here\n", cmd.Name)
	return cmd.Duration("hang-threshold"), nil
}
