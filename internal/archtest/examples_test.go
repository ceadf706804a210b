package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesImportOnlyPublicPackages checks that every runnable Example of a public package
// imports no internal package: an example shows what a caller in another module can write.
func TestExamplesImportOnlyPublicPackages(t *testing.T) {
	top := root(t)
	examples := 0
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != top && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		dir, err := filepath.Rel(top, filepath.Dir(path))
		if err != nil {
			return err
		}
		if isInternal(filepath.ToSlash(dir)) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		hasExample := false
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") {
				hasExample = true
			}
		}
		if !hasExample {
			return nil
		}
		examples++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if (p == module || strings.HasPrefix(p, module+"/")) && isInternal(rel(p)) {
				t.Errorf("%s: an Example imports %s, which no other module can import", filepath.Join(dir, name), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if examples == 0 {
		t.Fatal("found no Example: the walk is broken")
	}
}

// isInternal reports whether a module-relative package path is internal to the module.
func isInternal(p string) bool {
	return p == "internal" || strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal")
}
