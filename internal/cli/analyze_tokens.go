package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session"
)

func (a *app) tokensCommand() *cli.Command {
	return &cli.Command{
		Name:  "tokens",
		Usage: "count what a server's tool definitions cost in a model's context window",
		UsageText: "mcpspec tokens --server SPEC [--encoding o200k_base|cl100k_base] [--against FILE] [--budget N] [--json]\n\n" +
			"Per tool, heaviest first: the full tools/list entry and its core (name, description,\n" +
			"inputSchema — what a client forwards to a model), split into name, description, schema,\n" +
			"structure and extras; the totals' share of 8k/32k/128k/200k context windows. Counts are\n" +
			"exact for OpenAI models using the encoding and approximate for others. --against compares\n" +
			"with an earlier 'tokens --json' output, a saved tool list ('tools --json') or the audit's\n" +
			"lockfile (" + audit.DefaultLockPath + ", in a PR). Exit codes:\n" +
			"0 ok · 1 the core total exceeds --budget · 3 bad flags or --against file · 4 connection error.",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "encoding", Value: string(tokens.DefaultEncoding), Usage: "BPE `ENCODING`: o200k_base (GPT-4o and later) or cl100k_base (GPT-4)"},
			&cli.StringFlag{Name: "against", Usage: "compare with `FILE`: an earlier 'tokens --json' output, a saved tool list ('tools --json', a tools/list result), or the audit's lockfile (" + audit.DefaultLockPath + ")"},
			&cli.IntFlag{Name: "budget", Usage: "exit 1 when the core tokens of all tools exceed `N`"},
		),
		Action: documentVerb(a, a.tokensRun),
	}
}

// tokensJSON is the --json output of tokens (schema/tokens.v1.json).
type tokensJSON struct {
	sessionJSON
	*tokens.Report
	Against *tokensAgainstJSON `json:"against,omitempty"`
	Budget  *tokensBudgetJSON  `json:"budget,omitempty"`
	jsonOutcome
}

type tokensAgainstJSON struct {
	File string `json:"file"`
	*tokens.Diff
}

type tokensBudgetJSON struct {
	Limit int  `json:"limit"`
	Core  int  `json:"core"`
	OK    bool `json:"ok"`
}

// tokensRun does the work of tokens, filling out for --json.
func (a *app) tokensRun(ctx context.Context, cmd *cli.Command, f serverFlags, out *tokensJSON) error {
	enc := tokens.Encoding(cmd.String("encoding"))
	if !slices.Contains(tokens.Encodings(), enc) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --encoding %q", enc), Hint: "use o200k_base (GPT-4o, GPT-4.1, GPT-5, o-series) or cl100k_base (GPT-4, GPT-3.5)"}
	}
	budget := cmd.Int("budget")
	if budget < 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--budget must not be negative, got %d", budget), Hint: "e.g. --budget 4000"}
	}
	counter, err := tokens.NewCounter(enc)
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	var against *tokensAgainst
	if path := cmd.String("against"); path != "" {
		if against, err = loadTokensAgainst(counter, path); err != nil {
			return err
		}
	}
	return a.withSession(ctx, f, "tokens", func(ctx context.Context, t *target, s *session.Session) error {
		out.sessionJSON = newSessionJSON(t, s)
		inv, err := t.collect(ctx, s)
		if err != nil {
			return err
		}
		r, err := tokens.Measure(counter, inv.Tools)
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: err.Error(), Hint: "a tools/list entry is not a JSON object", Err: err}
		}
		out.Report = r
		var diff *tokens.Diff
		if against != nil {
			if diff, err = against.compare(counter, inv, r); err != nil {
				return err
			}
			out.Against = &tokensAgainstJSON{File: cmd.String("against"), Diff: diff}
		}
		if budget > 0 {
			out.Budget = &tokensBudgetJSON{Limit: budget, Core: r.Total.Core, OK: r.Total.Core <= budget}
		}
		if !f.JSON {
			if err := tokens.WriteText(a.io.Stdout, r, diff, cmd.String("against")); err != nil {
				return err
			}
			if out.Budget != nil {
				fmt.Fprintf(a.io.Stdout, "Budget: core %d of %d tokens\n", r.Total.Core, budget)
			}
		}
		if out.Budget != nil && !out.Budget.OK {
			return &Error{Code: ExitFailure, Msg: fmt.Sprintf("the tools' core definitions take %d %s tokens, over the budget of %d", r.Total.Core, enc, budget),
				Hint: "shorten the heaviest descriptions and schemas (listed first), or raise --budget"}
		}
		return nil
	})
}

// tokensAgainst is what --against names: a tokens report, a tool list, or the audit's
// lockfile (whose tool definitions are measured once the live server is known).
type tokensAgainst struct {
	report *tokens.Report
	lock   *audit.Lock
	path   string
}

// compare measures what the file holds and compares the live tools with it. Against a
// lockfile both sides are measured in its canonical form (keys sorted), so that key order
// does not count as a change.
func (ag *tokensAgainst) compare(counter *tokens.Counter, inv *inventory.Inventory, live *tokens.Report) (*tokens.Diff, error) {
	if ag.lock == nil {
		return tokens.Compare(ag.report, live), nil
	}
	sl, err := lockedServer(ag.lock, inv.ServerInfo.Name)
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: %v", ag.path, err), Hint: "the lockfile pins other servers; pin this one with mcpspec audit --update-lock"}
	}
	names := make([]string, 0, len(sl.Tools))
	for n := range sl.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	var locked []session.Tool
	for _, n := range names {
		var t session.Tool
		if err := json.Unmarshal(sl.Tools[n].Definition, &t); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: tool %q: %v", ag.path, n, err), Err: err}
		}
		t.Raw = sl.Tools[n].Definition
		locked = append(locked, t)
	}
	current := make([]session.Tool, len(inv.Tools))
	for i, t := range inv.Tools {
		current[i] = t
		if c, err := audit.Canonical(t.Raw); err == nil {
			current[i].Raw = c
		}
	}
	before, err := tokens.Measure(counter, locked)
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: %v", ag.path, err), Err: err}
	}
	after, err := tokens.Measure(counter, current)
	if err != nil {
		return nil, &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	return tokens.Compare(before, after), nil
}

// lockedServer picks the lockfile's entry for the live server: the only one, or the one whose
// name or recorded serverInfo.name is name.
func lockedServer(l *audit.Lock, name string) (*audit.ServerLock, error) {
	if sl, ok := l.Servers[name]; ok {
		return sl, nil
	}
	var keys []string
	for k, sl := range l.Servers {
		if sl.ServerName == name && name != "" {
			return sl, nil
		}
		keys = append(keys, k)
	}
	if len(l.Servers) == 1 {
		return l.Servers[keys[0]], nil
	}
	sort.Strings(keys)
	return nil, fmt.Errorf("no entry for server %q among %s", name, strings.Join(keys, ", "))
}

// loadTokensAgainst reads the file to compare with: a tokens report of the same encoding, a
// tool list (measured now with counter), or the audit's lockfile.
func loadTokensAgainst(counter *tokens.Counter, path string) (*tokensAgainst, error) {
	data, err := regfile.ReadFile(path, audit.MaxLockBytes)
	if err != nil {
		hint := "give a file written by 'mcpspec tokens --json' or 'mcpspec tools --json', or the lockfile " + audit.DefaultLockPath
		switch {
		case errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(path, ".lock"):
			hint = "pin the tools first: mcpspec audit --server SPEC --update-lock, and commit " + audit.DefaultLockPath
		case errors.Is(err, fs.ErrNotExist):
			hint = "save one first: mcpspec tokens --server SPEC --json > " + path
		}
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read --against file: %v", err), Hint: hint, Err: err}
	}
	var head struct {
		SchemaVersion string          `json:"schemaVersion"`
		Encoding      tokens.Encoding `json:"encoding"`
		LockVersion   *int            `json:"lockVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s is not JSON: %v", path, err), Hint: "give a file written by 'mcpspec tokens --json' or 'mcpspec tools --json', or the lockfile " + audit.DefaultLockPath, Err: err}
	}
	if head.LockVersion != nil {
		l, err := audit.ReadLock(bytes.NewReader(data))
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: %v", path, err), Hint: "restore it from version control, or write it again with mcpspec audit --update-lock", Err: err}
		}
		return &tokensAgainst{lock: l, path: path}, nil
	}
	if head.SchemaVersion == tokens.ReportVersion {
		if head.Encoding != counter.Encoding() {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s counts %s tokens, this run %s", path, head.Encoding, counter.Encoding()),
				Hint: fmt.Sprintf("pass --encoding %s, or compare with a saved tool list ('mcpspec tools --json'), which is measured again", head.Encoding)}
		}
		var r tokens.Report
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: %v", path, err), Err: err}
		}
		return &tokensAgainst{report: &r, path: path}, nil
	}
	var inv inventory.Inventory
	if err := json.Unmarshal(data, &inv); err != nil || len(inv.Tools) == 0 && !hasToolsMember(data) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s is neither a tokens report, a tool list nor a lockfile", path),
			Hint: "give a file written by 'mcpspec tokens --json' or 'mcpspec tools --json', or the lockfile " + audit.DefaultLockPath, Err: err}
	}
	r, err := tokens.Measure(counter, inv.Tools)
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--against %s: %v", path, err), Err: err}
	}
	return &tokensAgainst{report: r, path: path}, nil
}

// hasToolsMember reports whether data is an object with a "tools" member.
func hasToolsMember(data []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m["tools"]
	return ok
}
