package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/analyze/score"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) scoreCommand() *cli.Command {
	return &cli.Command{
		Name:  "score",
		Usage: "rate a server from 0 to 100 with a versioned rubric, and explain every point",
		UsageText: "mcpspec score --server SPEC [--explain] [--badge out.svg] [--min-score N] [--golden FILE] [--json]\n\n" +
			"Rubric " + score.RubricVersion + ": security (the audit's findings, severity × confidence), metadata quality,\n" +
			"token efficiency, protocol and errors (handshake, capabilities, a bad cursor, an unknown tool,\n" +
			"invalid arguments to a read-only tool, judged against the negotiated version) and\n" +
			"discoverability (near-duplicate descriptions; Recall@5, MRR, nDCG@10 with --golden). Checks\n" +
			"that do not apply leave the denominator. Latency is reported, never scored. The only tools\n" +
			"called are an unknown one and a read-only one without its required arguments.\n" +
			"Exit codes: 0 ok · 1 below --min-score · 3 bad flags · 4 connection error.",
		Flags: append(serverFlagDefs(),
			&cli.BoolFlag{Name: "explain", Usage: "show where every point went"},
			&cli.StringFlag{Name: "badge", Usage: "write an SVG badge (\"87 · " + score.RubricVersion + "\") to `FILE`"},
			&cli.IntFlag{Name: "min-score", Usage: "exit 1 when the score is below `N` (0–100)"},
			&cli.StringFlag{Name: "golden", Usage: "a retrieval golden set `FILE`: adds Recall@5, MRR and nDCG@10 of mcpspec's BM25 to discoverability"},
			quietFlag(),
		),
		Action: documentVerb(a, a.scoreRun),
	}
}

// scoreJSON is the --json output of score (schema/score.v1.json).
type scoreJSON struct {
	sessionJSON
	*score.Result
	Probes   *score.Probes      `json:"probes,omitempty"`
	Latency  []scoreLatency     `json:"latency,omitempty"`
	Security *scoreSecurityJSON `json:"security,omitempty"`
	Badge    string             `json:"badge,omitempty"`
	MinScore *scoreMinJSON      `json:"minScore,omitempty"`
	jsonOutcome
}

// runFigures implements [keptDocument]: the score, once there is one.
func (s *scoreJSON) runFigures() (map[string]float64, bool) {
	if s.Result == nil {
		return nil, false
	}
	return map[string]float64{history.FigureScore: float64(s.Score)}, true
}

// scoreLatency is one measured answer time, reported and never scored.
type scoreLatency struct {
	Probe string  `json:"probe"`
	Ms    float64 `json:"ms"`
}

type scoreSecurityJSON struct {
	Assessed bool   `json:"assessed"`
	Source   string `json:"source,omitempty"`
	Findings int    `json:"findings"`
}

type scoreMinJSON struct {
	Min int  `json:"min"`
	OK  bool `json:"ok"`
}

// scoreRun does the work of score, filling out for --json.
func (a *app) scoreRun(ctx context.Context, cmd *cli.Command, f serverFlags, out *scoreJSON) error {
	min := cmd.Int("min-score")
	if min < 0 || min > 100 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--min-score must be within 0–100, got %d", min), Hint: "e.g. --min-score 80"}
	}
	var golden *retrieval.GoldenSet
	if p := cmd.String("golden"); p != "" {
		g, err := retrieval.LoadGoldenSet(p)
		if err != nil {
			return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "check the --golden file (see 'mcpspec retrieval --help')", Err: err}
		}
		golden = g
	}
	counter, err := tokens.NewCounter(tokens.O200kBase)
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	prog := a.newPhases("score", cmd.Bool("quiet"))
	defer prog.done()
	prog.step("connecting and listing the tools, prompts and resources")
	return a.withSession(ctx, f, "score", func(ctx context.Context, t *target, s *session.Session) error {
		out.sessionJSON = newSessionJSON(t, s)
		t0 := time.Now()
		inv, err := t.collect(ctx, s)
		if err != nil {
			return err
		}
		listed := time.Since(t0)
		in := &score.Input{Inventory: inv}
		if in.Tokens, err = tokens.Measure(counter, inv.Tools); err != nil {
			return &Error{Code: ExitRuntime, Msg: err.Error(), Hint: "a tools/list entry is not a JSON object", Err: err}
		}
		probes := "ping, a bad cursor, an unknown tool"
		if name := score.InvalidArgumentsTarget(inv); name != "" {
			probes += ", " + name + " without its arguments"
		}
		prog.step("probing the protocol: %s", probes)
		in.Probes = score.Probe(ctx, s, inv)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		prog.step("auditing the metadata")
		if in.Security, err = a.scoreSecurity(ctx, s, inv); err != nil {
			return err
		}
		if golden != nil {
			prog.step("retrieval: %d golden queries against BM25 over the tools", len(golden.Queries))
			if in.Retrieval, err = retrieval.Evaluate(ctx, golden, retrieval.NewBM25(inv.Tools).Search, "bm25", nil); err != nil {
				return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
			}
		}
		prog.done()
		r := score.Rate(in)
		out.Result, out.Probes = r, in.Probes
		out.Latency = scoreLatencies(listed, in.Probes)
		out.Security = &scoreSecurityJSON{}
		if in.Security != nil {
			out.Security = &scoreSecurityJSON{Assessed: true, Source: in.Security.Source, Findings: len(in.Security.Findings)}
		}
		if !f.JSON {
			if err := score.WriteText(a.io.Stdout, r, cmd.Bool("explain")); err != nil {
				return err
			}
			var parts []string
			for _, l := range out.Latency {
				parts = append(parts, fmt.Sprintf("%s %s", l.Probe, textfmt.Duration(time.Duration(l.Ms*float64(time.Millisecond)))))
			}
			fmt.Fprintf(a.io.Stdout, "Latency (reported, not scored): %s\n", strings.Join(parts, " · "))
		}
		if path := cmd.String("badge"); path != "" {
			if err := writeBadge(path, r); err != nil {
				return err
			}
			out.Badge = path
			if !f.JSON {
				fmt.Fprintf(a.io.Stdout, "wrote %s (%s)\n", path, score.BadgeText(r))
			}
		}
		if cmd.IsSet("min-score") {
			out.MinScore = &scoreMinJSON{Min: min, OK: r.Score >= min}
			if r.Score < min {
				return &Error{Code: ExitFailure, Msg: fmt.Sprintf("MCP score %d is below --min-score %d", r.Score, min),
					Hint: "run with --explain to see where the points were lost"}
			}
		}
		return nil
	})
}

// scoreSecurity runs the passive audit over the inventory (no request, no tool call) with the
// committed suppressions (.mcpspec/audit-suppressions.yaml when it exists). Drift against the
// lockfile is left to 'mcpspec audit': the score rates the server, not its history.
func (a *app) scoreSecurity(ctx context.Context, _ *session.Session, inv *inventory.Inventory) (*score.SecurityInput, error) {
	opts, err := committedSuppressions()
	if err != nil {
		return nil, err
	}
	return score.Audit(ctx, inv, opts)
}

// committedSuppressions returns audit options holding the committed suppressions
// (.mcpspec/audit-suppressions.yaml when it exists).
func committedSuppressions() (*audit.Options, error) {
	opts := &audit.Options{}
	f, err := regfile.OpenLimit(defaultSuppressions, audit.MaxSuppressionBytes)
	switch {
	case err == nil:
		defer f.Close()
		if opts.Suppressions, err = audit.ReadSuppressions(f, defaultSuppressions); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: err.Error(), Hint: "each suppression needs rule, reason and expires (YYYY-MM-DD)", Err: err}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read the suppressions file: %v", err), Err: err}
	}
	return opts, nil
}

func scoreLatencies(listed time.Duration, p *score.Probes) []scoreLatency {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	out := []scoreLatency{{"listing", ms(listed)}, {"ping", ms(p.Ping.Latency)}, {"bad cursor", ms(p.InvalidCursor.Latency)}, {"unknown tool", ms(p.UnknownTool.Latency)}}
	if p.InvalidArguments != nil {
		out = append(out, scoreLatency{"invalid arguments", ms(p.InvalidArguments.Latency)})
	}
	return out
}

// writeBadge writes the SVG badge to path.
func writeBadge(path string, r *score.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot write --badge: %v", err), Hint: "check that the directory exists and can be written", Err: err}
	}
	werr := score.WriteBadge(f, r)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("write --badge %s: %v", path, werr), Err: werr}
	}
	return nil
}
