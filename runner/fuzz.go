package runner

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// KindFuzz is the kind of the fuzz: block's test cases.
const KindFuzz = fuzz.Kind

// fuzzBlock is the collection's `fuzz:` block as a detector block: the fuzzer runs against the
// block's server with the pool's opener (it opens, and after a crash reopens, sessions of its
// own); each finding is a failed test, each family without one a passed test. With
// saveFindings, the findings are written as a collection of regression tests.
func (cr *colRun) fuzzBlock(b *collection.FuzzSpec) block {
	return block{kind: KindFuzz, server: b.Server, pos: b.Pos, run: func(ctx context.Context, op *serverconn.Opener) ([]*result.Test, []string, error) {
		fams, err := mutate.ParseFamilies(b.Payloads)
		if err != nil {
			return nil, nil, err
		}
		opts := &fuzz.Options{Iterations: b.Iterations, Seed: b.Seed, Time: b.Time, Families: fams, Strict: b.Strict,
			IncludeDestructive: b.IncludeDestructive, IncludeOpenWorld: b.IncludeOpenWorld, Tools: b.Tools, SkipTools: b.SkipTools,
			HangAfter: b.HangAfter}
		rep, err := fuzz.Run(ctx, op, opts)
		if rep == nil {
			return nil, nil, err
		}
		tests := rep.Tests()
		if b.SaveFindings != "" && len(rep.Findings) > 0 {
			if err := saveFindings(b.SaveFindings, rep, cr.col.Servers[b.Server], opts); err != nil {
				e := &result.Error{Message: cr.mask(err.Error()), Hint: "check that saveFindings names a writable file"}
				tests = append(tests, &result.Test{ID: "fuzz-save", Name: "fuzz: save the findings", Kind: KindFuzz, Status: result.Errored,
					Error: e, Attempts: []result.Attempt{{Status: result.Errored, Error: e}}})
			}
		}
		return tests, rep.Tools, nil
	}}
}

// saveFindings writes the findings as a collection at path (relative to the working directory,
// as the CLI's --save-findings is).
func saveFindings(path string, rep *fuzz.Report, srv *collection.Server, opts *fuzz.Options) error {
	var b bytes.Buffer
	if _, err := fuzz.WriteFindings(&b, rep, &fuzz.SaveOptions{Server: savedServer(srv), HangAfter: opts.HangAfter}); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("fuzz: save findings: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("fuzz: save findings: %w", err)
	}
	return nil
}

// savedServer is the collection server as a saved collection names it (variables as
// written, so secrets stay templates).
func savedServer(s *collection.Server) fuzz.SavedServer {
	if s == nil {
		return fuzz.SavedServer{}
	}
	out := fuzz.SavedServer{Cwd: s.Cwd, ProtocolVersion: s.ProtocolVersion, Env: s.Env, Headers: s.Headers}
	switch s.Transport {
	case collection.TransportTestServer:
		out.Transport, out.Args = s.Transport, s.Args
		if len(s.Env) == 0 && s.Cwd == "" && s.ProtocolVersion == "" {
			return fuzz.SavedServer{Spec: strings.TrimSpace(spec.BuiltinName + " " + spec.Join(s.Args))}
		}
	case collection.TransportStdio:
		out.Command, out.Args = s.Command, s.Args
	default:
		out.Transport, out.URL = s.Transport, s.URL
	}
	if len(out.Env) > 0 {
		out.Env = maps.Clone(out.Env)
	}
	return out
}
