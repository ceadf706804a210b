package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/synth"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/schema"
	"github.com/mcpspec/mcpspec/session"
)

// initListID is the id of the starter collection's tools/list test.
const initListID = "tools-list"

// The outcomes of init's call of a tool.
const (
	initOK        = "ok"         // a result without isError
	initToolError = "tool-error" // a result with isError
	initRPCError  = "rpc-error"  // a JSON-RPC error
)

// initTest is one tool's test in the starter collection.
type initTest struct {
	id, tool string
	args     map[string]any
	outcome  string
	// code is the JSON-RPC error code of an initRPCError.
	code int
	// outputSchema: the tool declares one (checked when the call succeeds).
	outputSchema bool
	// snapshot: the result is compared with __snapshots__/ID.json; dropped when two runs differ.
	snapshot bool
	// timed: the answer holds a time of day, so it gets no snapshot (it would fail tomorrow).
	timed bool
	// left says why the tool is left out of the collection ("" = it is in).
	left string
}

// callOnce calls tool once with arguments made from its inputSchema and records the outcome.
func callOnce(ctx context.Context, s *session.Session, tool session.Tool, id string) *initTest {
	t := &initTest{id: id, tool: tool.Name, args: synth.Args(tool.InputSchema), outputSchema: len(tool.OutputSchema) > 0}
	if strings.TrimSpace(tool.Name) == "" {
		t.left = "its name is blank, and a collection cannot call a tool by a blank name"
		return t
	}
	res, err := s.CallTool(ctx, tool.Name, t.args, nil)
	var se *session.Error
	switch {
	case err == nil && res.IsError:
		t.outcome, t.timed = initToolError, timeOfDay.Match(res.Raw)
	case err == nil:
		t.outcome, t.timed = initOK, timeOfDay.Match(res.Raw)
	case errors.As(err, &se) && se.Category == session.ServerError:
		t.outcome, t.code, t.timed = initRPCError, se.Code, true
	default:
		t.timed = true
		t.left = fmt.Sprintf("its call failed (%s): %v", session.CategoryOf(err), err)
	}
	t.snapshot = !t.timed
	return t
}

// timeOfDay finds a time of day (12:34:56, 2026-11-28T12:34) in an answer: one that would
// fail its snapshot the next time, even when two runs within a second agree.
var timeOfDay = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}\b|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}`)

// idRun is what the collection format turns into one "-" in a derived test id.
var idRun = regexp.MustCompile(`[^a-z0-9]+`)

// initFileStem turns name into a test id or file stem: lower-case letters, digits and single
// dashes, at most 64 characters; "" when nothing is left.
func initFileStem(name string) string {
	s := strings.Trim(idRun.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	return s
}

// uniqueID returns name's id, made unique among taken (which it joins).
func uniqueID(taken map[string]bool, name string) string {
	base := initFileStem(name)
	if base == "" {
		base = "tool"
	}
	id := base
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	taken[id] = true
	return id
}

// yamlString quotes s for YAML (a JSON string is a YAML double-quoted scalar), with its
// variable references escaped so that mcpspec reads it back as s ([collection.EscapeTemplate]).
func yamlString(s string) string {
	b, _ := json.Marshal(collection.EscapeTemplate(s))
	return string(b)
}

// escapeBraces returns v with the variable references of every string, key or value, escaped.
func escapeBraces(v any) any {
	switch x := v.(type) {
	case string:
		return collection.EscapeTemplate(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[collection.EscapeTemplate(k)] = escapeBraces(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = escapeBraces(e)
		}
		return out
	}
	return v
}

// renderCollection writes the starter collection's YAML.
func renderCollection(plan *initPlan) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# yaml-language-server: $schema=%s%s\n", schema.BaseURL, schema.CollectionV1Name)
	b.WriteString("#\n# A starter collection written by `mcpspec init` from what the server listed: one test per\n" +
		"# tool, called with arguments made up from its inputSchema, and the assertions its answer\n" +
		"# passed when init ran (isError, the tool's outputSchema, a snapshot in __snapshots__/).\n" +
		"# Turn the arguments into real cases; `mcpspec test --update` rewrites the snapshots.\n")
	var left []string
	for _, sk := range plan.skipped {
		left = append(left, fmt.Sprintf("#   %s: %s\n", sk.Tool, sk.Reason))
	}
	for _, t := range plan.tests {
		if t.left != "" {
			left = append(left, fmt.Sprintf("#   %s: %s\n", t.tool, oneLine(t.left)))
		}
	}
	if len(left) > 0 {
		b.WriteString("# Left out:\n" + strings.Join(left, ""))
	}
	fmt.Fprintf(&b, "schemaVersion: \"1.0\"\nname: %s\nserver: %s\n\ntests:\n", yamlString(plan.name), yamlString(plan.server))
	fmt.Fprintf(&b, "  - id: %s\n    name: The server lists its tools\n    list: tools\n", initListID)
	if !plan.listUnstable {
		fmt.Fprintf(&b, "    expect:\n      - snapshot: {name: %s%s, path: \"$.items[*].name\"}\n", snapshotPrefix(plan), initListID)
	}
	for _, t := range plan.tests {
		if t.left != "" {
			continue
		}
		args, _ := json.Marshal(escapeBraces(t.args))
		fmt.Fprintf(&b, "\n  - id: %s\n    name: %s\n    call: %s\n    with: %s\n", t.id, yamlString(t.tool), yamlString(t.tool), args)
		var expect []string
		switch t.outcome {
		case initOK:
			expect = append(expect, "isError: false")
			if t.outputSchema {
				expect = append(expect, "schema: output")
			}
		case initToolError:
			b.WriteString("    # These arguments got a tool error (isError) when init ran: make them a real case.\n    expectError: true\n")
			expect = append(expect, "isError: true")
		case initRPCError:
			fmt.Fprintf(&b, "    # These arguments got a JSON-RPC error when init ran: make them a real case.\n    expectError: {code: %d}\n", t.code)
		}
		if t.snapshot {
			expect = append(expect, "snapshot: "+snapshotPrefix(plan)+t.id)
		} else if t.timed && t.outcome != initRPCError {
			b.WriteString("    # No snapshot: the answer holds a time of day.\n")
		}
		if len(expect) > 0 {
			b.WriteString("    expect:\n")
			for _, e := range expect {
				b.WriteString("      - " + e + "\n")
			}
		}
	}
	return b.Bytes()
}

// oneLine keeps the first line of s.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// initWrite writes the collection, runs it once with --update (which writes the snapshots)
// and once more to check it; a snapshot that differs between the two runs is dropped, and a
// test that still fails is left out, so that the collection passes as written.
func (a *app) initWrite(ctx context.Context, r *initRun, plan *initPlan) error {
	p := r.paths(plan.name)
	lock, err := readInitLock(p.lock)
	if err != nil {
		return err
	}
	if !r.force {
		in := initConflicts(p.collection)
		pattern := filepath.Join(p.snapshots, snapshotPrefix(plan)+"*.json")
		if old, _ := filepath.Glob(pattern); len(old) > 0 {
			in = append(in, fmt.Sprintf("%d snapshot files (%s)", len(old), pattern))
		}
		if had := lock.Servers[plan.meta.Name]; had != nil && !sameLockEntry(had, audit.LockServer(plan.meta)) {
			in = append(in, fmt.Sprintf("%s (its entry for %q)", p.lock, plan.meta.Name))
		}
		if len(in) > 0 {
			return &Error{Code: ExitConfig, Msg: "init would overwrite " + strings.Join(in, ", "),
				Hint: "pass --force to overwrite them, or --name NAME for another collection (or another DIR)"}
		}
	}
	if err := os.MkdirAll(filepath.Dir(p.collection), 0o755); err != nil {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot create %s: %v", filepath.Dir(p.collection), err), Err: err}
	}
	if r.force {
		old, _ := filepath.Glob(filepath.Join(p.snapshots, snapshotPrefix(plan)+"*.json"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return &Error{Code: ExitRuntime, Msg: "cannot remove the old snapshot: " + err.Error(), Err: err}
			}
		}
	}
	if _, err := a.writeLock(p.lock, lock, []*audit.Metadata{plan.meta}); err != nil {
		return err
	}
	if err := addGitignoreLine(p.gitignore, initGitignoreLine); err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot update " + p.gitignore + ": " + err.Error(), Err: err}
	}
	stderrDir, err := os.MkdirTemp(a.io.TempDir, "mcpspec-init-")
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot create a temporary directory: " + err.Error(), Err: err}
	}
	defer os.RemoveAll(stderrDir)
	for round := 0; ; round++ {
		if err := a.writeCollection(p.collection, plan); err != nil {
			return err
		}
		if round == 0 {
			if _, err := a.initRun(ctx, r, p.collection, stderrDir, true); err != nil {
				return err
			}
		}
		failed, err := a.initRun(ctx, r, p.collection, stderrDir, false)
		if err != nil {
			return err
		}
		if len(failed) == 0 {
			break
		}
		if round == 2 {
			return &Error{Code: ExitFailure, Msg: fmt.Sprintf("the collection %s does not pass: %s", p.collection, strings.Join(slices.Sorted(maps.Keys(failed)), ", ")),
				Hint: "run 'mcpspec test " + p.collection + "' to see why, and edit those tests"}
		}
		dropFailing(plan, failed, p.snapshots)
	}
	tests := 1
	for _, t := range plan.tests {
		if t.left == "" {
			tests++
		}
	}
	fmt.Fprintf(a.io.Stdout, "Wrote %s (%d tests), its snapshots in %s, %s and a %s line in %s.\n",
		p.collection, tests, p.snapshots, p.lock, initGitignoreLine, p.gitignore)
	for _, sk := range plan.skipped {
		fmt.Fprintf(a.io.Stdout, "Left out %s: %s.\n", sk.Tool, sk.Reason)
	}
	for _, t := range plan.tests {
		if t.left != "" {
			fmt.Fprintf(a.io.Stdout, "Left out %s: %s.\n", t.tool, oneLine(t.left))
		}
	}
	run := "mcpspec test"
	if filepath.Clean(r.dir) != "." {
		run = fmt.Sprintf("cd %s && mcpspec test", r.dir)
	}
	fmt.Fprintf(a.io.Stdout, "Next: %s\n", run)
	return nil
}

// snapshotPrefix starts the names of the collection's snapshot files, so that collections
// side by side in one directory keep theirs apart: "NAME." (__snapshots__/NAME.echo.json).
func snapshotPrefix(plan *initPlan) string { return initFileStem(plan.name) + "." }

// sameLockEntry reports whether two servers' lock entries pin the same definitions.
func sameLockEntry(a, b *audit.ServerLock) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// readInitLock reads the lockfile at path, so that init adds its server to the others; an
// empty lock when there is none.
func readInitLock(path string) (*audit.Lock, error) {
	data, err := regfile.ReadFile(path, audit.MaxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &audit.Lock{}, nil
	}
	if err == nil {
		var lock *audit.Lock
		if lock, err = audit.ReadLock(bytes.NewReader(data)); err == nil {
			return lock, nil
		}
	}
	return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s: %v", path, err), Hint: "restore it from version control, or delete it and run mcpspec init again", Err: err}
}

// dropFailing drops the snapshot of each failing test (its answer changed between two runs),
// or the test itself when it had no snapshot left to drop (say, the tool needs a client
// capability the collection does not declare).
func dropFailing(plan *initPlan, failed map[string]string, snapshots string) {
	for id, why := range failed {
		if id == initListID {
			plan.listUnstable = true
			_ = os.Remove(filepath.Join(snapshots, snapshotPrefix(plan)+id+".json"))
		}
		for _, t := range plan.tests {
			if t.id != id || t.left != "" {
				continue
			}
			if t.snapshot {
				t.snapshot = false
			} else {
				t.left = "a run of the collection failed it: " + why
			}
			_ = os.Remove(filepath.Join(snapshots, snapshotPrefix(plan)+id+".json"))
		}
	}
}

// writeCollection writes plan's collection to path (never through a link; secrets masked).
func (a *app) writeCollection(path string, plan *initPlan) error {
	if err := regfile.WriteFile(path, []byte(a.masker.Mask(string(renderCollection(plan)))), 0o644); err != nil {
		if nr := (*regfile.NotRegularError)(nil); errors.As(err, &nr) {
			return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "remove it: a collection is never written through a link", Err: err}
		}
		return &Error{Code: ExitRuntime, Msg: "cannot write " + path + ": " + err.Error(), Err: err}
	}
	return nil
}

// initRun runs the collection at path as `mcpspec test` would (with update, as --update) and
// returns the tests that did not pass: id → why.
func (a *app) initRun(ctx context.Context, r *initRun, path, stderrDir string, update bool) (map[string]string, error) {
	opts := runner.Options{
		LookupEnv:       os.LookupEnv,
		UpdateSnapshots: update,
		CallTimeout:     r.f.Timeout,
		ConnectTimeout:  r.f.ConnectTimeout,
		Executable:      a.io.Executable,
		StderrDir:       stderrDir,
		Abort:           a.io.Abort,
	}
	lo := opts.LoadOptions()
	lo.Masker = a.masker
	cols, err := loadCollections([]string{path}, lo, "test")
	if err != nil {
		return nil, err
	}
	run, err := runner.New(&opts).Run(ctx, cols)
	if err != nil {
		var ce *runner.ConnectError
		if errors.As(err, &ce) {
			return nil, &Error{Code: ExitConnection, Msg: "the collection's server could not be connected: " + strings.Join(ce.Servers, "; "),
				Hint: "run 'mcpspec test' in " + r.dir + "; a relative path in the SPEC is relative to where mcpspec runs", Err: err}
		}
		return nil, err
	}
	failed := map[string]string{}
	for _, c := range run.Collections {
		for _, t := range c.Tests {
			switch {
			case t.Status == result.Passed:
			case t.Error != nil:
				failed[t.ID] = fmt.Sprintf("%s: %s", t.Error.Category, t.Error.Message)
			case len(t.Failures) > 0:
				failed[t.ID] = t.Failures[0].Message
			default:
				failed[t.ID] = string(t.Status)
			}
		}
	}
	return failed, nil
}

// addGitignoreLine appends line to the .gitignore at path unless it has it; it creates the file.
func addGitignoreLine(path, line string) error {
	data, err := regfile.ReadFile(path, 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == line || strings.TrimSpace(l) == strings.TrimSuffix(line, "/") {
			return nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	return regfile.WriteFile(path, append(data, line+"\n"...), 0o644)
}
