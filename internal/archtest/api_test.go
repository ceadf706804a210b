package archtest

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPublicAPINeedsNoInternalType checks that no exported name of a public package needs a
// type another module cannot name: every type in an exported signature, field, method or
// variable comes from a public package, or is an internal type a public package re-exports
// with an alias (collection.Masker for internal/redact.Masker).
func TestPublicAPINeedsNoInternalType(t *testing.T) {
	top := root(t)
	out := goCmd(t, 10*time.Minute, top, nil, "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./...")
	export := map[string]string{}
	var ours []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		path, file, ok := strings.Cut(l, " ")
		if !ok || file == "" {
			continue
		}
		export[path] = file
		if (path == module || strings.HasPrefix(path, module+"/")) && !isInternal(rel(path)) {
			ours = append(ours, path)
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})

	pkgs := map[string]*types.Package{}
	aliased := map[*types.TypeName]bool{} // internal types a public package names with an alias
	for _, path := range ours {
		p, err := imp.Import(path)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[path] = p
		for _, n := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(n).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
				if nt, ok := types.Unalias(tn.Type()).(*types.Named); ok {
					aliased[nt.Obj()] = true
				}
			}
		}
	}

	var problems []string
	for _, path := range ours {
		p := pkgs[path]
		for _, n := range p.Scope().Names() {
			obj := p.Scope().Lookup(n)
			if !obj.Exported() {
				continue
			}
			report := func(where string, tn *types.TypeName) {
				problems = append(problems, fmt.Sprintf("%s.%s: %s needs %s.%s", rel(path), n, where, rel(tn.Pkg().Path()), tn.Name()))
			}
			check := func(where string, typ types.Type) {
				walk(typ, map[types.Type]bool{}, func(tn *types.TypeName) {
					if tn.Pkg() != nil && strings.HasPrefix(tn.Pkg().Path(), module+"/") && isInternal(rel(tn.Pkg().Path())) && !aliased[tn] {
						report(where, tn)
					}
				})
			}
			tn, isType := obj.(*types.TypeName)
			if !isType {
				check("its type", obj.Type())
				continue
			}
			if tn.IsAlias() {
				continue // an alias re-exports the type: that is the way out
			}
			check("its definition", tn.Type().Underlying())
			if nt, ok := tn.Type().(*types.Named); ok {
				for m := range nt.Methods() {
					if m.Exported() {
						check("method "+m.Name(), m.Type())
					}
				}
			}
		}
	}
	slices.Sort(problems)
	for _, p := range slices.Compact(problems) {
		t.Error(p)
	}
}

// walk calls f with every named type that typ mentions where a caller can reach it: through
// pointers, containers, signatures, exported fields and interface methods.
func walk(typ types.Type, seen map[types.Type]bool, f func(*types.TypeName)) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	switch typ := typ.(type) {
	case *types.Alias:
		walk(types.Unalias(typ), seen, f)
	case *types.Named:
		f(typ.Obj())
		for a := range typ.TypeArgs().Types() {
			walk(a, seen, f)
		}
	case *types.Pointer:
		walk(typ.Elem(), seen, f)
	case *types.Slice:
		walk(typ.Elem(), seen, f)
	case *types.Array:
		walk(typ.Elem(), seen, f)
	case *types.Map:
		walk(typ.Key(), seen, f)
		walk(typ.Elem(), seen, f)
	case *types.Chan:
		walk(typ.Elem(), seen, f)
	case *types.Signature:
		for v := range typ.Params().Variables() {
			walk(v.Type(), seen, f)
		}
		for v := range typ.Results().Variables() {
			walk(v.Type(), seen, f)
		}
	case *types.Struct:
		for v := range typ.Fields() {
			if v.Exported() {
				walk(v.Type(), seen, f)
			}
		}
	case *types.Interface:
		for m := range typ.Methods() {
			walk(m.Type(), seen, f)
		}
	}
}
