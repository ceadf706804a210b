package collection

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/schema"
)

// Limits of safe loading: a collection is untrusted input.
const (
	// DefaultMaxFileSize is the largest collection file accepted (1 MiB).
	DefaultMaxFileSize = 1 << 20
	// DefaultMaxDepth bounds the nesting of free-form values (input, expected values, inline
	// schemas, variables), counted from the value itself.
	DefaultMaxDepth = 10
	// DefaultMaxTests is the most tests one collection may hold.
	DefaultMaxTests = 1000
	// maxDocumentDepth bounds the nesting of the whole document, whatever it holds.
	maxDocumentDepth = 64
)

// LoadOptions tune loading. A nil *LoadOptions means defaults: no process environment (every
// {{env.X}} is undefined), no extra variables, the default environment.
type LoadOptions struct {
	// LookupEnv resolves {{env.NAME}} and {{secret.NAME}} (os.LookupEnv in the CLI); a name it
	// does not know is then looked up in EnvFile.
	LookupEnv func(name string) (string, bool)
	// Vars are --var name=value pairs (highest precedence after extracted values); each value
	// is read as a YAML scalar (quote it to keep a string).
	Vars map[string]string
	// EnvFile are the variables of --env-file (below Vars).
	EnvFile map[string]string
	// Data are the variables of one data row (`mcpspec test --data`): above EnvFile and the
	// environment, below Vars.
	Data map[string]any
	// Environment selects an environment; empty means the collection's defaultEnvironment.
	Environment string
	// Registry compiles assertions; nil means assert.Builtins().
	Registry *assert.Registry
	// SnapshotDir holds snapshot golden files; empty means "__snapshots__" next to the file.
	SnapshotDir string
	// Expr bounds expressions (zero fields: assert.DefaultExprLimits).
	Expr assert.ExprLimits
	// FS, when set, is where Load and LoadAll read files; nil means the OS file system.
	FS fs.FS
	// MaxFileSize, MaxDepth and MaxTests override the limits (zero: the defaults).
	MaxFileSize int64
	MaxDepth    int
	MaxTests    int
	// Masker, when set, is the masker every loaded collection registers its secrets with (the
	// CLI shares one across a run, so every output masks every collection's secrets); nil gives
	// each collection its own.
	Masker *Masker
}

// Loader loads collections. It compiles the collection JSON Schema once; one Loader may be
// used from several goroutines.
type Loader struct {
	opts   LoadOptions
	schema *jsonschema.Schema
}

// NewLoader returns a loader with the given options (nil: defaults).
func NewLoader(opts *LoadOptions) (*Loader, error) {
	l := &Loader{}
	if opts != nil {
		l.opts = *opts
	}
	if l.opts.Registry == nil {
		l.opts.Registry = assert.Builtins()
	}
	if l.opts.LookupEnv == nil {
		l.opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if file := l.opts.EnvFile; len(file) > 0 {
		// An --env-file is a dotenv file: its entries also stand in for environment variables
		// the process does not set, so {{secret.TOKEN}} can come from a .env kept out of git.
		lookup := l.opts.LookupEnv
		l.opts.LookupEnv = func(name string) (string, bool) {
			if v, ok := lookup(name); ok {
				return v, true
			}
			v, ok := file[name]
			return v, ok
		}
	}
	if l.opts.MaxFileSize <= 0 {
		l.opts.MaxFileSize = DefaultMaxFileSize
	}
	if l.opts.MaxDepth <= 0 {
		l.opts.MaxDepth = DefaultMaxDepth
	}
	if l.opts.MaxTests <= 0 {
		l.opts.MaxTests = DefaultMaxTests
	}
	sch, err := compileCollectionSchema()
	if err != nil {
		return nil, fmt.Errorf("collection: compile %s: %w", schema.CollectionV1Name, err)
	}
	l.schema = sch
	return l, nil
}

// compileCollectionSchema compiles the embedded schema/collection.v1.json.
func compileCollectionSchema() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema.CollectionV1()))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const loc = "https://mcpspec.dev/schema/collection.v1.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// Load reads and validates one collection file with a new [Loader].
func Load(path string, opts *LoadOptions) (*Collection, error) {
	l, err := NewLoader(opts)
	if err != nil {
		return nil, err
	}
	return l.Load(path)
}

// Parse validates a collection held in memory; name is used in positions and to place the
// snapshot directory.
func Parse(name string, data []byte, opts *LoadOptions) (*Collection, error) {
	l, err := NewLoader(opts)
	if err != nil {
		return nil, err
	}
	return l.Parse(name, data)
}

// LoadAll loads every path; a directory contributes its *.yaml and *.yml files (not recursive),
// sorted. Any error in any file fails the whole load: the returned error lists the problems of
// every file and no collection is returned.
func LoadAll(paths []string, opts *LoadOptions) ([]*Collection, error) {
	l, err := NewLoader(opts)
	if err != nil {
		return nil, err
	}
	return l.LoadAll(paths...)
}

// readFile reads through the loader's FS or the OS, refusing what is not a regular file (a
// *regfile.NotRegularError) and files over the size limit, without reading them whole.
func (l *Loader) readFile(path string) ([]byte, error) {
	var f io.ReadCloser
	var err error
	if l.opts.FS != nil {
		if err := regfile.CheckFS(l.opts.FS, filepath.ToSlash(path)); err != nil {
			return nil, err
		}
		f, err = l.opts.FS.Open(filepath.ToSlash(path))
	} else {
		// A named pipe (or device) named *.yaml would block a plain open forever.
		f, err = regfile.Open(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, l.opts.MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	return data, nil
}

// Load reads and validates one collection file. Problems with the collection come back as an
// [ErrorList]; a file that cannot be read as an error naming the path.
func (l *Loader) Load(path string) (*Collection, error) {
	data, err := l.readFile(path)
	if err != nil {
		return nil, fmt.Errorf("load collection %s: %w", path, err)
	}
	return l.Parse(path, data)
}

// LoadAll is [LoadAll] with this loader.
func (l *Loader) LoadAll(paths ...string) ([]*Collection, error) {
	var files []string
	for _, p := range paths {
		var info fs.FileInfo
		var err error
		if l.opts.FS != nil {
			info, err = fs.Stat(l.opts.FS, filepath.ToSlash(p))
		} else {
			info, err = os.Stat(p)
		}
		if err != nil {
			return nil, fmt.Errorf("load collections: %w", err)
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		var entries []fs.DirEntry
		if l.opts.FS != nil {
			entries, err = fs.ReadDir(l.opts.FS, filepath.ToSlash(p))
		} else {
			entries, err = os.ReadDir(p)
		}
		if err != nil {
			return nil, fmt.Errorf("load collections: %w", err)
		}
		var found []string
		for _, e := range entries {
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				found = append(found, filepath.Join(p, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("load collections: no *.yaml or *.yml file in %s", p)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	if len(files) == 0 {
		return nil, errors.New("load collections: no collection given")
	}
	var (
		out    []*Collection
		errs   ErrorList
		ioErrs []error
	)
	for _, f := range files {
		c, err := l.Load(f)
		var el ErrorList
		switch {
		case errors.As(err, &el):
			errs = append(errs, el...)
		case err != nil:
			ioErrs = append(ioErrs, err)
		default:
			out = append(out, c)
		}
	}
	if len(ioErrs) > 0 {
		if len(errs) > 0 {
			ioErrs = append(ioErrs, errs)
		}
		return nil, errors.Join(ioErrs...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// yamlParserProblems are the messages of yaml.v3's parser (not its scanner) errors, whose
// "line N" is 0-based (gopkg.in/yaml.v3 v3.0.1, parserc.go; decode.go's fail adds 1 to scanner
// errors only).
var yamlParserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// yamlLineRE finds the line number in yaml.v3's error messages.
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`) })

// Parse validates a collection held in memory. See the package documentation for the order of
// checks; every problem found is returned in one [ErrorList].
func (l *Loader) Parse(name string, data []byte) (c *Collection, err error) {
	doc, err := l.parseDocument(name, data)
	if err != nil {
		return nil, err
	}

	snap := l.opts.SnapshotDir
	if snap == "" {
		snap = filepath.Join(filepath.Dir(name), "__snapshots__")
	}
	d := &decoder{
		file: name, reg: l.opts.Registry, test: -1,
		maxDepth: l.opts.MaxDepth, maxTests: l.opts.MaxTests,
		copts: &assert.CompileOptions{SnapshotDir: snap, Expr: l.opts.Expr},
	}
	if !d.checkTree(doc, 1, maxDocumentDepth) {
		return nil, sortErrors(d.errs)
	}
	c = d.decodeCollection(doc)
	if len(d.errs) == 0 {
		l.validateSchema(d, doc)
	}
	if c == nil {
		return nil, sortErrors(d.errs)
	}
	// Decoding errors do not stop here: validation (ids, dependencies, servers, variables)
	// runs too, so one load reports every problem at once.
	c.Masker = l.opts.Masker
	if c.Masker == nil {
		c.Masker = NewMasker()
	}
	env := l.opts.Environment
	if env == "" {
		env = c.DefaultEnvironment
	}
	var envVars map[string]any
	if env != "" {
		e, ok := c.Environments[env]
		if !ok {
			names := slices.Sorted(maps.Keys(c.Environments))
			hint := suggest(env, names)
			switch {
			case hint != "":
			case len(names) == 0:
				hint = "the collection defines no environments: add an environments: block, or drop --env"
			default:
				hint = "defined: " + strings.Join(names, ", ")
			}
			d.errs = append(d.errs, &Error{Pos: Pos{File: name}, Hint: hint,
				Msg: fmt.Sprintf("environment %q is not defined in the collection", env)})
			return nil, sortErrors(d.errs)
		}
		envVars = e.Variables
	}
	c.Environment = env
	base := newVars(l.opts.LookupEnv, c.Masker, c.Variables, envVars, toAny(l.opts.EnvFile), l.opts.Data, scalars(l.opts.Vars))
	d.resolveTemplates(c, base)
	d.validate(c, base, l.opts.LookupEnv)
	if len(d.errs) > 0 {
		return nil, sortErrors(d.errs)
	}
	c.vars = base
	// Secrets referenced anywhere are known now: register them so the very first output is masked.
	for _, r := range d.refs {
		if strings.HasPrefix(r.name, secretPrefix) || (strings.HasPrefix(r.name, envPrefix) && IsSecretName(r.name)) {
			base.Lookup(r.name)
		}
	}
	for _, s := range c.Servers {
		RegisterServerSecrets(c.Masker, s)
	}
	return c, nil
}

// parseDocument checks data's size and encoding and decodes it as exactly one YAML document,
// returning the document's root node; a problem is an [ErrorList] of one.
func (l *Loader) parseDocument(name string, data []byte) (*yaml.Node, error) {
	fail := func(pos Pos, hint, format string, args ...any) (*yaml.Node, error) {
		pos.File = name
		return nil, ErrorList{{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint}}
	}
	if int64(len(data)) > l.opts.MaxFileSize {
		return fail(Pos{}, "split the tests over several files: a directory of collections runs them all",
			"collection is larger than %s", sizeText(l.opts.MaxFileSize))
	}
	if pos, ok := binaryAt(data); ok {
		return fail(pos, "a collection is a YAML text file in UTF-8; is this the right file?",
			"not a text file: the byte at line %d, column %d is not UTF-8 text", pos.Line, pos.Column)
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return fail(Pos{}, emptyHint, "collection is empty")
		}
		line, msg := 0, err.Error()
		if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
			if yamlParserProblems[msg] {
				// yaml.v3 numbers a parser error's line from 0 (only a scanner error's from 1),
				// and leaves out a line 0: both point one line above the problem.
				line++
			}
		}
		if col, ok := tabIndent(data, line); ok {
			return fail(Pos{Line: line, Column: col}, "YAML indents with spaces only: replace the tab with spaces",
				"YAML syntax error: a tab in the indentation")
		}
		if col, path, ok := unquotedFlowPath(data, line); ok {
			return fail(Pos{Line: line, Column: col}, fmt.Sprintf("quote the JSONPath: inside { } or [ ] YAML reads its [ ] and , as syntax; write %q", path),
				"YAML syntax error: %s", msg)
		}
		return fail(Pos{Line: line}, "", "YAML syntax error: %s", msg)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return fail(Pos{Line: extra.Line}, "remove the --- line and what follows, or move it to a file of its own",
			"a collection file holds one YAML document; found a second")
	} else if !errors.Is(err, io.EOF) {
		return fail(Pos{}, "", "YAML syntax error after the first document: %v", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return fail(Pos{}, emptyHint, "collection is empty")
	}
	return root.Content[0], nil
}

// emptyHint shows the smallest collection.
const emptyHint = `a collection needs at least a server and tests, e.g. "server: testserver" then "tests: [{call: echo, with: {text: hi}}]"`

// sizeText writes a byte count, in MiB or KiB when it is a whole number of them.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// binaryAt finds the first byte that cannot be in a YAML text file (invalid UTF-8, or a
// control character other than tab, newline and carriage return) and returns its position.
func binaryAt(data []byte) (Pos, bool) {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if (r == utf8.RuneError && size <= 1) || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			return Pos{Line: line, Column: col}, true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return Pos{}, false
}

// tabIndent reports whether line (1-based) of data starts its indentation with a tab, and the
// column of that tab.
// flowPathRE finds an unquoted JSONPath value ($. or $[) after a key in a flow mapping.
var flowPathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[{,]\s*[A-Za-z_][\w-]*:\s+(\$[.\[][^\s,}]*(?:\[[^\]]*\][^\s,}]*)*)`)
})

// unquotedFlowPath finds, on line (from 1) of data, an unquoted JSONPath inside a flow mapping
// ({path: $.content[0].text}), whose brackets and commas YAML takes for its own syntax. It
// returns the path's column (from 1) and the path as far as it can tell.
func unquotedFlowPath(data []byte, line int) (int, string, bool) {
	if line < 1 {
		return 0, "", false
	}
	lines := bytes.SplitN(data, []byte("\n"), line+1)
	if len(lines) < line {
		return 0, "", false
	}
	m := flowPathRE().FindSubmatchIndex(lines[line-1])
	if m == nil {
		return 0, "", false
	}
	return m[2] + 1, string(lines[line-1][m[2]:m[3]]), true
}

func tabIndent(data []byte, line int) (int, bool) {
	if line < 1 {
		return 0, false
	}
	lines := bytes.SplitN(data, []byte("\n"), line+1)
	if len(lines) < line {
		return 0, false
	}
	for i, c := range lines[line-1] {
		if c == '\t' {
			return i + 1, true
		}
		if c != ' ' && c != '-' {
			return 0, false
		}
	}
	return 0, false
}

// toAny converts a string map to a variable layer.
// scalars reads each --var value as a YAML scalar, as the same value written in an environment
// block would be: 5 is a number, true a boolean, 0.3 a number, '5' or "5" the string 5. A value
// that is not a plain scalar in YAML (a list, a map, an unterminated quote) stays the text given.
func scalars(m map[string]string) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
		var n yaml.Node
		if yaml.Unmarshal([]byte(v), &n) != nil || len(n.Content) != 1 || n.Content[0].Kind != yaml.ScalarNode {
			continue
		}
		sc := n.Content[0]
		switch sc.Tag {
		case "!!null":
			out[k] = nil
		case "!!bool", "!!float":
			var x any
			if sc.Decode(&x) == nil {
				out[k] = x
			}
		case "!!int":
			// As the collection's own values: int64, float64 beyond its range.
			if i, err := strconv.ParseInt(strings.ReplaceAll(sc.Value, "_", ""), 0, 64); err == nil {
				out[k] = i
			} else if f, err := strconv.ParseFloat(sc.Value, 64); err == nil {
				out[k] = f
			}
		case "!!str":
			out[k] = sc.Value // quotes removed: '5' is the string 5
		}
	}
	return out
}

func toAny(m map[string]string) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
