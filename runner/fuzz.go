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
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// runFuzz runs the collection's `fuzz:` block against its server with the pool's opener (the
// fuzzer opens, and after a crash reopens, sessions of its own) and adds its test cases: one
// failed test per finding, one passed test per family that showed none. With saveFindings,
// the findings are written as a collection of regression tests.
func (cr *colRun) runFuzz(ctx context.Context, spec *collection.FuzzSpec) {
	name := spec.Server
	if name == "" {
		name = cr.col.DefaultServer
	}
	errored := func(e *result.Error) {
		cr.addTests(&result.Test{ID: "fuzz", Name: "fuzz " + name, Server: name, Kind: fuzz.Kind, Status: result.Errored, Error: e,
			Attempts: []result.Attempt{{Status: result.Errored, Error: e}}})
	}
	p, ok := cr.pools[name]
	if !ok {
		errored(&result.Error{Message: fmt.Sprintf("fuzz: the collection has no server %q", name)})
		return
	}
	// A pooled session first: it records the server and its tools, as a test would.
	c, rerr := p.acquire(ctx)
	if rerr != nil {
		errored(rerr)
		return
	}
	p.release(c, false)
	fams, err := mutate.ParseFamilies(spec.Payloads)
	if err != nil {
		errored(&result.Error{Message: fmt.Sprintf("fuzz (%s, line %d): %v", cr.col.File, spec.Pos.Line, err)})
		return
	}
	opts := &fuzz.Options{Iterations: spec.Iterations, Seed: spec.Seed, Time: spec.Time, Families: fams, Strict: spec.Strict,
		IncludeDestructive: spec.IncludeDestructive, IncludeOpenWorld: spec.IncludeOpenWorld, Tools: spec.Tools, SkipTools: spec.SkipTools,
		HangAfter: spec.HangAfter}
	rep, err := fuzz.Run(ctx, p.sp.Opener(), opts)
	if err != nil && rep == nil {
		e := &result.Error{Category: string(session.CategoryOf(err)), Message: p.mask("fuzz: " + err.Error())}
		if ctx.Err() != nil {
			e.Category, e.Message = string(session.Cancelled), "interrupted"
		}
		errored(e)
		return
	}
	tests := rep.Tests()
	for _, t := range tests {
		t.Server = name
		if t.Duration == 0 {
			t.Duration = rep.Duration
		}
	}
	cr.addTests(tests...)
	if spec.SaveFindings != "" && len(rep.Findings) > 0 {
		if err := saveFindings(spec.SaveFindings, rep, cr.col.Servers[name], opts); err != nil {
			errored(&result.Error{Message: p.mask(err.Error()), Hint: "check that saveFindings names a writable file"})
		}
	}
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
