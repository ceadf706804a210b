package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// nonVarChars are the characters a {{secret.NAME}} made from a header's name replaces with _.
var nonVarChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// Defaults of the fuzz verb's bounds.
const (
	defaultFuzzIterations = 500
	defaultFuzzTime       = 5 * time.Minute
)

func (a *app) fuzzCommand() *cli.Command {
	var flags []cli.Flag
	for _, f := range serverFlagDefs() {
		// fuzz's own hang detector is --hang-after; --hang-threshold is its hidden alias.
		if f.Names()[0] != "hang-threshold" {
			flags = append(flags, f)
		}
	}
	flags = append(flags,
		&cli.IntFlag{Name: "iterations", Aliases: []string{"n"}, Value: defaultFuzzIterations, Usage: "run at most `N` cases"},
		&cli.Int64Flag{Name: "seed", DefaultText: "random, printed", Usage: "seed the case generator with `S`: the same seed against the same server gives the same cases"},
		&cli.DurationFlag{Name: "time", Value: defaultFuzzTime, Usage: "stop after `D`, minimisation included (0: no time bound)"},
		&cli.StringFlag{Name: "save-findings", Usage: "write each finding as a regression test to the collection `FILE` (replay: mcpspec test FILE)"},
		&cli.BoolFlag{Name: "strict", Usage: "also fail on accepted-invalid: arguments that break a tool's inputSchema answered with success"},
		&cli.StringSliceFlag{Name: "family", Usage: "fuzz only this case `FAMILY` (repeatable): " + strings.Join(familyNames(), ", ")},
		&cli.StringSliceFlag{Name: "tool", Usage: "call only tools matching `GLOB` in schema cases (repeatable)"},
		&cli.StringSliceFlag{Name: "skip-tool", Usage: "never call tools matching `GLOB` (repeatable)"},
		&cli.BoolFlag{Name: "include-destructive", Usage: "also call tools annotated destructiveHint: true"},
		&cli.BoolFlag{Name: "include-open-world", Usage: "also call tools annotated openWorldHint: true (they reach outside the server)"},
		&durationFlag{Name: "hang-after", Value: fuzz.DefaultHangAfter, Usage: "a request unanswered after `D` is a hang"},
		hangAfterAlias(),
		&cli.IntFlag{Name: "minimize-runs", Value: fuzz.DefaultMinimizeRuns, Usage: "reproductions tried to minimise each finding (`N`, 0: no minimisation)"},
		&cli.StringSliceFlag{Name: "reporter", Aliases: []string{"r"}, Usage: "report findings as `NAME[=PATH]`: console, json, junit, tap, html, markdown (repeatable)"},
		quietFlag(),
		explainFlag(),
	)
	return &cli.Command{
		Name:  "fuzz",
		Usage: "send malformed frames and mutated tool arguments; report crashes, hangs and malformed answers",
		UsageText: `mcpspec fuzz --server SPEC [--iterations N] [--seed S] [--time D] [--save-findings FILE] [--strict] [--json] [--explain]
mcpspec fuzz --server "python -m my_server" --family deep-nesting --family schema --tool 'search_*'`,
		Description: fuzzDescription,
		Flags:       flags,
		Action:      a.fuzz,
	}
}

const fuzzDescription = `Sends malformed and edge-case JSON-RPC frames (malformed JSON, truncated frames, invalid
UTF-8, control characters, huge frames, deep nesting, wrong jsonrpc, unknown and numeric
methods, bad params and ids, batches, notifications with ids, requests before initialize) and
tools/call arguments derived from each tool's inputSchema and mutated. Each case is classified;
a crash (a server process that exits on a frame included), a hang or a malformed answer is a
finding (and accepted-invalid, with --strict), one per cause. Each finding is reproduced on a
fresh session and minimised, and can be saved as a regression test (--save-findings); one that
does not show again is listed as unconfirmed and fails nothing.

Exit codes: 0 no confirmed finding · 1 findings · 3 bad flags · 4 the server could not be
reached · 130 interrupted.`

func familyNames() []string {
	var out []string
	for _, f := range mutate.Families() {
		out = append(out, string(f))
	}
	return out
}

// fuzzRun is one invocation's settings.
type fuzzRun struct {
	f         serverFlags
	opts      fuzz.Options
	seedGiven bool
	save      string
	reporters []reporterSpec
	quiet     bool // --quiet: no progress on stderr
}

func (a *app) readFuzzRun(cmd *cli.Command) (*fuzzRun, error) {
	r := &fuzzRun{f: a.serverFlags(cmd), save: cmd.String("save-findings"), seedGiven: cmd.IsSet("seed"), quiet: cmd.Bool("quiet")}
	fams, err := mutate.ParseFamilies(cmd.StringSlice("family"))
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: "bad --family: " + err.Error(), Hint: "use one of: " + strings.Join(familyNames(), ", ")}
	}
	hang, err := a.hangAfter(cmd, &r.f)
	if err != nil {
		return nil, err
	}
	r.opts = fuzz.Options{
		Iterations: int(cmd.Int("iterations")), Seed: cmd.Int64("seed"), Time: cmd.Duration("time"), Families: fams,
		Strict: cmd.Bool("strict"), IncludeDestructive: cmd.Bool("include-destructive"), IncludeOpenWorld: cmd.Bool("include-open-world"),
		Tools: cmd.StringSlice("tool"), SkipTools: cmd.StringSlice("skip-tool"), HangAfter: hang,
		MinimizeRuns: int(cmd.Int("minimize-runs")),
	}
	switch {
	case r.opts.Iterations < 1:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--iterations must be at least 1, got %d", r.opts.Iterations), Hint: "e.g. --iterations 500"}
	case r.opts.Time < 0:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--time must not be negative, got %s", r.opts.Time), Hint: "e.g. --time 2m, or 0 for no time bound"}
	case r.opts.HangAfter <= 0:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--hang-after must be positive, got %s", r.opts.HangAfter), Hint: "e.g. --hang-after 5s"}
	case r.opts.MinimizeRuns < 0:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--minimize-runs must not be negative, got %d", r.opts.MinimizeRuns), Hint: "0 turns minimisation off"}
	}
	if r.opts.MinimizeRuns == 0 {
		r.opts.MinimizeRuns = -1
	}
	if !r.seedGiven {
		var b [8]byte
		_, _ = rand.Read(b[:])
		r.opts.Seed = int64(binary.LittleEndian.Uint64(b[:]) >> 1)
	}
	r.reporters, err = parseReporters(cmd.StringSlice("reporter"))
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (a *app) fuzz(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	r, err := a.readFuzzRun(cmd)
	if err != nil {
		return err
	}
	if cmd.Bool("explain") {
		return explainFuzz(a.io.Stdout, r)
	}
	t, err := a.prepare(r.f, "fuzz")
	if err != nil {
		return err
	}
	failed := false
	defer func() { t.finish(failed) }()
	reps, err := a.openReporters(r.reporters)
	if err != nil {
		return err
	}
	defer closeReporters(reps)
	notes := a.io.Stdout
	if r.f.JSON || consoleOff(r.reporters) {
		notes = a.io.Stderr
	}
	bound := fmt.Sprintf("%d cases", r.opts.Iterations)
	if r.opts.Time > 0 {
		bound += " or " + r.opts.Time.String()
	}
	fmt.Fprintf(notes, "fuzz: %s, seed %d, up to %s\n", t.info, r.opts.Seed, bound)
	started := time.Now()
	prog := a.newPhases("fuzz", r.quiet)
	r.opts.Progress = prog.detector()
	if prog != nil {
		cases, every := 0, max(1, r.opts.Iterations/10)
		r.opts.OnCase = func(c fuzz.CaseResult) {
			cases++
			if cases%every == 0 || prog.live != nil || c.Outcome.Bug(r.opts.Strict) {
				prog.step("case %d/%d: %s → %s", cases, r.opts.Iterations, c.Case.Family, c.Outcome)
			}
		}
	}
	rep, runErr := fuzz.Run(ctx, t.op, &r.opts)
	prog.done()
	if rep == nil {
		failed = true
		if ctx.Err() != nil {
			return runErr
		}
		if errors.Is(runErr, fuzz.ErrNothingToFuzz) {
			return &Error{Code: ExitConfig, Msg: runErr.Error(), Hint: "widen --family or --tool, or pass --include-destructive", Err: runErr}
		}
		return t.connectError(ctx, runErr)
	}
	failed = rep.Bugs() > 0
	var fuzzDoc bytes.Buffer
	if writeFuzzJSON(&fuzzDoc, rep) == nil {
		a.keepRun("fuzz", t.info.Spec, fuzzDoc.Bytes(), map[string]float64{history.FigureFindings: float64(rep.Bugs())})
	}
	var problems []error
	switch {
	case r.save != "" && rep.Bugs() > 0:
		if err := a.saveFindings(r, t, rep, notes); err != nil {
			problems = append(problems, err)
		}
	case r.save != "":
		fmt.Fprintf(notes, "no finding to save: %s was not written\n", r.save)
	}
	if r.f.JSON {
		if err := writeFuzzJSON(a.io.Stdout, rep); err != nil {
			problems = append(problems, err)
		}
	}
	run := rep.Run(t.info.Spec, started)
	for _, o := range reps {
		if r.f.JSON && o.file == nil {
			continue // --json owns stdout
		}
		if err := o.rep.Report(o.w, run); err != nil {
			problems = append(problems, fmt.Errorf("write the %s report: %w", o.spec.name, err))
		}
	}
	fmt.Fprintln(notes, rep.Summary())
	fmt.Fprintf(notes, "outcomes: %s; %d respawns\n", rep.OutcomeLine(), rep.Respawns)
	for _, n := range rep.Notes {
		fmt.Fprintln(notes, "note: "+n)
	}
	if len(problems) > 0 {
		return &Error{Code: ExitRuntime, Msg: errors.Join(problems...).Error(), Err: errors.Join(problems...)}
	}
	if runErr != nil {
		return runErr
	}
	if rep.Bugs() > 0 {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("%d finding(s) (seed %d)", rep.Bugs(), rep.Seed),
			Hint: fuzzHint(r, rep)}
	}
	return nil
}

// consoleOff reports whether no console reporter writes to stdout (another reporter owns it).
func consoleOff(specs []reporterSpec) bool {
	for _, s := range specs {
		if s.path == "" && s.name != "console" {
			return true
		}
	}
	return false
}

func fuzzHint(r *fuzzRun, rep *fuzz.Report) string {
	if r.save != "" {
		return "replay the saved findings with: mcpspec test " + r.save
	}
	return fmt.Sprintf("reproduce with --seed %d; keep them as regression tests with --save-findings findings.yaml", rep.Seed)
}

// saveFindings writes the findings collection and says so.
func (a *app) saveFindings(r *fuzzRun, t *target, rep *fuzz.Report, notes io.Writer) error {
	var b bytes.Buffer
	saved, err := fuzz.WriteFindings(&b, rep, &fuzz.SaveOptions{Server: savedServer(r.f, t.info), HangAfter: r.opts.HangAfter})
	if err != nil {
		return err
	}
	if dir := filepath.Dir(r.save); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--save-findings: %w", err)
		}
	}
	// The file is meant to be committed: secrets are {{secret.X}} references (savedServer), and
	// anything else of them is masked.
	if err := os.WriteFile(r.save, []byte(a.masker.Mask(b.String())), 0o644); err != nil {
		return fmt.Errorf("--save-findings: %w", err)
	}
	fmt.Fprintf(notes, "saved %d finding(s) as regression tests in %s (replay: mcpspec test %s)\n", saved.Tests, r.save, r.save)
	if sv := savedServer(r.f, t.info); len(sv.Secrets) > 0 {
		fmt.Fprintf(notes, "it reads %s from the environment as {{secret.…}}: set them (or --env-file) to replay\n", strings.Join(sv.Secrets, ", "))
	}
	for id, why := range saved.Skipped {
		fmt.Fprintf(notes, "not saved: %s: %s\n", id, why)
	}
	return nil
}

// savedServer is the server as the saved collection names it: the SPEC, or a server mapping
// when flags add to it (environment, headers, a forced transport, a pinned version).
//
// The file is meant to be committed: the value of a header, an env entry or a URL query
// parameter named like a secret ([redact.IsSecretName]) is written as a {{secret.NAME}}
// reference (Secrets lists the names), other values with their braces escaped.
func savedServer(f serverFlags, info spec.Info) fuzz.SavedServer {
	s := fuzz.SavedServer{Spec: f.Server}
	secret := func(name string) string {
		n := strings.ToUpper(nonVarChars.ReplaceAllString(name, "_"))
		if !slices.Contains(s.Secrets, n) {
			s.Secrets = append(s.Secrets, n)
		}
		return "{{secret." + n + "}}"
	}
	if u, err := url.Parse(f.Server); err == nil && u.RawQuery != "" && u.Host != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, _, _ := strings.Cut(p, "=")
			if name, err := url.QueryUnescape(k); err == nil && redact.IsSecretName(name) {
				parts[i] = k + "=" + secret(name)
			}
		}
		u.RawQuery = strings.Join(parts, "&")
		s.Spec = u.String()
	}
	if len(f.Env) == 0 && len(f.Header) == 0 && f.Transport == "" && f.ProtocolVersion == "" {
		return s
	}
	s.ProtocolVersion = f.ProtocolVersion
	kv := func(entries []string) map[string]string {
		if len(entries) == 0 {
			return nil
		}
		m := map[string]string{}
		for _, e := range entries {
			i := strings.IndexAny(e, "=:")
			if i <= 0 {
				continue
			}
			k, v := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
			switch scheme, _, hasScheme := strings.Cut(v, " "); {
			case !redact.IsSecretName(k):
				m[k] = collection.EscapeTemplate(v)
			case hasScheme:
				m[k] = scheme + " " + secret(k) // Authorization: Bearer {{secret.AUTHORIZATION}}
			default:
				m[k] = secret(k)
			}
		}
		return m
	}
	switch {
	case info.Builtin:
		s.Transport, s.Args, s.Env = "testserver", info.Argv[4:], kv(f.Env)
	case info.Transport == spec.Stdio:
		s.Command, s.Args, s.Env = info.Argv[0], info.Argv[1:], kv(f.Env)
	default:
		s.Transport, s.URL, s.Headers = string(info.Transport), s.Spec, kv(f.Header)
		if info.Transport == spec.Auto {
			s.Transport = "http"
		}
	}
	return s
}

// fuzzJSON is the --json document (schema/fuzz.v1.json).
type fuzzJSON struct {
	*fuzz.Report
	FindingCount int      `json:"findingCount"`
	ExitCode     ExitCode `json:"exitCode"`
}

func writeFuzzJSON(w io.Writer, rep *fuzz.Report) error {
	doc := fuzzJSON{Report: rep, FindingCount: rep.Bugs()}
	if rep.Bugs() > 0 {
		doc.ExitCode = ExitFailure
	}
	if rep.StoppedBy == "interrupted" {
		doc.ExitCode = ExitInterrupted
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func explainFuzz(w io.Writer, r *fuzzRun) error {
	var b strings.Builder
	b.WriteString("mcpspec fuzz sends malformed frames and mutated tool arguments to one server and reports the cases it does not survive.\n\nSteps:\n")
	n := explainServer(&b, r.f, 1)
	fams := r.opts.Families
	if len(fams) == 0 {
		fams = mutate.Families()
	}
	var names []string
	for _, f := range fams {
		names = append(names, string(f))
	}
	fmt.Fprintf(&b, "  %d. List the tools. Schema cases call those not annotated destructiveHint (unless --include-destructive) or openWorldHint (unless --include-open-world), filtered by --tool and --skip-tool.\n", n)
	seed := "a random seed, printed first"
	if r.seedGiven {
		seed = fmt.Sprintf("seed %d", r.opts.Seed)
	}
	fmt.Fprintf(&b, "  %d. Generate up to %d cases from %s (the same seed against the same server gives the same cases), from the families: %s.\n", n+1, r.opts.Iterations, seed, strings.Join(names, ", "))
	fmt.Fprintf(&b, "  %d. Send each case: frames byte for byte on the session (before-initialize cases on a fresh connection with no handshake), tools/call with the generated arguments. Then ping the server (the liveness check), so a crash or hang is blamed on the case that caused it.\n", n+2)
	fmt.Fprintf(&b, "  %d. Classify it. A frame that is a well-formed MCP message must be survived, and answered within --hang-after %s when it is a request; any other frame may be refused (an error, silence, closing the connection) but must not crash the server or make its process exit; whatever comes back must be well-formed JSON-RPC. Tool calls alternate with and without a progressToken in _meta.\n", n+3, r.opts.HangAfter)
	fmt.Fprintf(&b, "     Outcomes: answered, rejected (JSON-RPC error), tool-error (isError), ignored, closed (closed the connection and stayed up), slow (a tool still running), desynced, accepted-invalid, crash, hang, malformed.\n")
	fmt.Fprintf(&b, "  %d. After a crash, open a new session (restart the server) and go on, within --iterations and --time %s.\n", n+4, r.opts.Time)
	fmt.Fprintf(&b, "  %d. Reproduce each finding on a fresh session and minimise it (at most --minimize-runs reproductions): shorter strings, shallower nesting, fewer members. A crash that does not show again on its case may have come just after an earlier case's answer (a timer that throws): that case, then the three before it on the session, are tried with a second ping after a pause, and the one that crashes is blamed. A finding a plain ping (or the tool called with {}) shows too does not depend on the input and is not shrunk; one that does not show again is unconfirmed and fails nothing; crashes that come with the number of calls a session carried, whatever the case, are one after-calls finding. Cases that show one cause (a crash report's headline, a method left unanswered, an id the server changed) are one finding.\n", n+5)
	if r.save != "" {
		fmt.Fprintf(&b, "  %d. Write the findings to %s as a collection whose tests fail while each bug is there (mcpspec test %s).\n", n+6, r.save, r.save)
	} else {
		fmt.Fprintf(&b, "  %d. Report the findings (--reporter, --json); --save-findings FILE keeps them as regression tests.\n", n+6)
	}
	b.WriteString("\nBugs: crash, hang, malformed answer; accepted-invalid with --strict.\n")
	b.WriteString("Exit codes: 0 no confirmed finding · 1 findings · 3 bad flags · 4 the server could not be reached · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
