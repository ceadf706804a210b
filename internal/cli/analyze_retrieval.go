package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) retrievalCommand() *cli.Command {
	return &cli.Command{
		Name:  "retrieval",
		Usage: "measure how well tool search finds the right tools for a golden set of queries",
		UsageText: "mcpspec retrieval --server SPEC --golden FILE [--search-tool NAME [--query-arg q] [--limit-arg limit]]\n" +
			"                  [--k 1,3,5,10] [--baseline FILE [--tolerance 0.02]] [--json]\n\n" +
			"Runs every query of the golden set (YAML or JSON: queries with graded relevant tools)\n" +
			"through the server's search tool (--search-tool) or, by default, mcpspec's BM25 over the\n" +
			"server's tool list, and reports Recall@k, MRR, nDCG@10 and MAP. --baseline compares with an\n" +
			"earlier 'retrieval --json' output: a metric that fell by more than --tolerance fails.\n" +
			"Exit codes: 0 ok · 1 regression against --baseline · 3 bad flags or files · 4 connection error.",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "golden", Usage: "the golden set `FILE` (YAML or JSON)"},
			&cli.StringFlag{Name: "search-tool", Usage: "search with the server's tool `NAME` instead of mcpspec's BM25"},
			&cli.StringFlag{Name: "query-arg", Value: "query", Usage: "the search tool's argument that takes the query (`NAME`)"},
			&cli.StringFlag{Name: "limit-arg", Usage: "the search tool's argument that takes the number of results (`NAME`), if any"},
			&cli.StringFlag{Name: "k", Value: "1,3,5,10", Usage: "cut-offs of Recall@k (`LIST`)"},
			&cli.StringFlag{Name: "baseline", Usage: "gate against an earlier 'retrieval --json' output (`FILE`)"},
			&cli.FloatFlag{Name: "tolerance", Value: 0.02, Usage: "how far (absolute) a metric may fall below the baseline (`F`)"},
		),
		Action: documentVerb(a, a.retrievalRun),
	}
}

// retrievalJSON is the --json output of retrieval (schema/retrieval.v1.json).
type retrievalJSON struct {
	sessionJSON
	*retrieval.Report
	jsonOutcome
}

// retrievalRun does the work of retrieval, filling out for --json.
func (a *app) retrievalRun(ctx context.Context, cmd *cli.Command, f serverFlags, out *retrievalJSON) error {
	path := cmd.String("golden")
	if path == "" {
		return &Error{Code: ExitConfig, Msg: "missing --golden", Hint: "give a golden set: queries with the tools that should answer them (see 'mcpspec retrieval --help' and the README)"}
	}
	g, err := retrieval.LoadGoldenSet(path)
	if err != nil {
		hint := "fix the golden set; each query needs an id, a query and labels [{tool, relevance}] with a relevance of 1 or more"
		if errors.Is(err, fs.ErrNotExist) {
			hint = "check the --golden path"
		}
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: hint, Err: err}
	}
	ks, err := parseKs(cmd.String("k"))
	if err != nil {
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "e.g. --k 1,5,10"}
	}
	tol := cmd.Float("tolerance")
	if tol < 0 || tol >= 1 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--tolerance must be in [0, 1), got %v", tol), Hint: "e.g. --tolerance 0.02"}
	}
	var base *retrieval.Report
	if bp := cmd.String("baseline"); bp != "" {
		if base, err = loadRetrievalBaseline(bp); err != nil {
			return err
		}
	}
	return a.withSession(ctx, f, "retrieval", func(ctx context.Context, t *target, s *session.Session) error {
		out.sessionJSON = newSessionJSON(t, s)
		inv, err := t.collect(ctx, s)
		if err != nil {
			return err
		}
		var names []string
		for _, tl := range inv.Tools {
			names = append(names, tl.Name)
		}
		search, label := retrieval.NewBM25(inv.Tools).Search, "bm25"
		if tool := cmd.String("search-tool"); tool != "" {
			if inv.Tool(tool) == nil {
				return &Error{Code: ExitConfig, Msg: fmt.Sprintf("the server has no tool %q", tool), Hint: "available: " + strings.Join(names, ", ")}
			}
			search, label = retrieval.ToolSearch(s, tool, cmd.String("query-arg"), cmd.String("limit-arg"), names), "tool:"+tool
		}
		r, err := retrieval.Evaluate(ctx, g, search, label, &retrieval.Options{Ks: ks})
		if err != nil {
			var se *session.Error
			if errors.As(err, &se) {
				return t.requestError(err, "the search tool")
			}
			return &Error{Code: ExitRuntime, Msg: err.Error(), Hint: "check --search-tool and --query-arg", Err: err}
		}
		if base != nil {
			r.Gate = retrieval.Compare(base, r, cmd.String("baseline"), tol)
		}
		out.Report = r
		if !f.JSON {
			if err := retrieval.WriteText(a.io.Stdout, r); err != nil {
				return err
			}
		}
		if r.Gate != nil && !r.Gate.Passed {
			return &Error{Code: ExitFailure, Msg: fmt.Sprintf("retrieval regressed against %s: %d metric(s) fell by more than %v", cmd.String("baseline"), len(r.Gate.Regressions), tol),
				Hint: "see the queries with the lowest scores and the tools they missed"}
		}
		return nil
	})
}

// parseKs reads a comma-separated list of positive cut-offs.
func parseKs(s string) ([]int, error) {
	var ks []int
	for _, part := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || k <= 0 || k > 100 {
			return nil, fmt.Errorf("--k %q: want positive whole numbers up to 100, comma-separated", s)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// loadRetrievalBaseline reads an earlier retrieval --json output.
func loadRetrievalBaseline(path string) (*retrieval.Report, error) {
	data, err := regfile.ReadFile(path, retrieval.MaxReportBytes)
	if err != nil {
		hint := "save one first: mcpspec retrieval --server SPEC --golden FILE --json > " + path
		if !errors.Is(err, fs.ErrNotExist) {
			hint = ""
		}
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read --baseline: %v", err), Hint: hint, Err: err}
	}
	var r retrieval.Report
	if err := json.Unmarshal(data, &r); err != nil || r.SchemaVersion != retrieval.ReportVersion {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--baseline %s is not a retrieval report", path),
			Hint: "give a file written by 'mcpspec retrieval --json'", Err: err}
	}
	return &r, nil
}
