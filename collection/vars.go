package collection

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/internal/redact"
)

// templateRE matches one variable reference: {{name}}, {{ name }}, {{env.NAME}}, {{secret.NAME}}.
// A backslash before the braces (\{{) keeps them literal.
var templateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\?\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}`) })

// wholeRE matches a string that is exactly one reference.
var wholeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}$`) })

// refRE matches a reference without the escaping backslash, for [EscapeTemplate].
var refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*[A-Za-z_][A-Za-z0-9_.\-]*\s*\}\}`) })

// EscapeTemplate returns s written so that a collection reads it back as s itself: a backslash
// goes before every {{name}} reference, so nothing is expanded. Text a server chose (a tool
// name, an argument) goes through it before it is written into a collection: a tool named
// leak{{env.DB_URL}} must not send DB_URL to the server when the collection is replayed.
func EscapeTemplate(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return refRE().ReplaceAllStringFunc(s, func(m string) string { return `\` + m })
}

// Unescape returns s with the backslash of each escaped reference (\{{name}}) removed and every
// other reference left as written.
func Unescape(s string) string {
	if !strings.Contains(s, `\{{`) {
		return s
	}
	return templateRE().ReplaceAllStringFunc(s, func(m string) string {
		return strings.TrimPrefix(m, `\`)
	})
}

// Reference prefixes naming the process environment.
const (
	envPrefix    = "env."
	secretPrefix = "secret."
)

// References returns the variable names referenced in s, in order, without duplicates
// ("env.HOME" and "secret.TOKEN" included as written).
func References(s string) []string {
	if !strings.Contains(s, "{{") {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range templateRE().FindAllStringSubmatch(s, -1) {
		if strings.HasPrefix(m[0], `\`) || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		out = append(out, m[1])
	}
	return out
}

// Vars resolves variable references. Precedence, highest first:
//
//	extracted (Set by the runner) > --var (LoadOptions.Vars) > a --data row (LoadOptions.Data)
//	> --env-file (LoadOptions.EnvFile) > the selected environment > the collection's `variables:`
//
// {{env.NAME}} reads the process environment through LoadOptions.LookupEnv; {{secret.NAME}} does
// too and registers the value with the [Masker]. A string that is exactly one reference
// ("{{count}}") expands to the variable's value with its type (a number stays a number, an object
// an object); a reference inside a longer string is substituted as text (numbers without
// exponent, objects as JSON). Values from --var, --env-file and the process environment are
// always strings.
//
// Vars is safe for concurrent use.
type Vars struct {
	layers    []map[string]any // lowest precedence first; read-only after construction
	lookupEnv func(string) (string, bool)
	masker    *Masker

	mu        sync.RWMutex // guards extracted
	extracted map[string]any
}

// newVars builds the base scope; layers are lowest precedence first.
func newVars(lookupEnv func(string) (string, bool), masker *Masker, layers ...map[string]any) *Vars {
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	v := &Vars{lookupEnv: lookupEnv, masker: masker, extracted: map[string]any{}}
	for _, l := range layers {
		if l != nil {
			v.layers = append(v.layers, l)
			for k, val := range l {
				if IsSecretName(k) {
					masker.Add(assert.ToString(val))
				}
			}
		}
	}
	return v
}

// NewVars returns a scope with the given variables (lowest precedence first) and environment
// lookup, for callers that build variables without a collection. lookupEnv may be nil.
func NewVars(lookupEnv func(string) (string, bool), layers ...map[string]any) *Vars {
	return newVars(lookupEnv, NewMasker(), layers...)
}

// Clone returns an independent copy (extracted values included) sharing the masker.
func (v *Vars) Clone() *Vars {
	if v == nil {
		return NewVars(nil)
	}
	v.mu.RLock()
	defer v.mu.RUnlock()
	return &Vars{layers: v.layers, lookupEnv: v.lookupEnv, masker: v.masker, extracted: maps.Clone(v.extracted)}
}

// Masker returns the masker secrets are registered with.
func (v *Vars) Masker() *Masker { return v.masker }

// Set records an extracted value (highest precedence). A name that looks secret (see
// [IsSecretName]) has its value registered with the masker.
func (v *Vars) Set(name string, value any) {
	v.mu.Lock()
	v.extracted[name] = value
	v.mu.Unlock()
	if IsSecretName(name) {
		v.masker.Add(assert.ToString(value))
	}
}

// Lookup resolves one name as written inside the braces.
func (v *Vars) Lookup(name string) (any, bool) {
	switch {
	case strings.HasPrefix(name, envPrefix):
		s, ok := v.lookupEnv(strings.TrimPrefix(name, envPrefix))
		if ok && IsSecretName(name) {
			v.masker.Add(s)
		}
		return s, ok
	case strings.HasPrefix(name, secretPrefix):
		s, ok := v.lookupEnv(strings.TrimPrefix(name, secretPrefix))
		if ok {
			v.masker.Add(s)
		}
		return s, ok
	}
	v.mu.RLock()
	val, ok := v.extracted[name]
	v.mu.RUnlock()
	if ok {
		return val, true
	}
	for i := len(v.layers) - 1; i >= 0; i-- {
		if val, ok := v.layers[i][name]; ok {
			return val, true
		}
	}
	return nil, false
}

// UndefinedError reports a reference to a variable nobody defined.
type UndefinedError struct{ Name string }

// Error implements error.
func (e *UndefinedError) Error() string { return fmt.Sprintf("undefined variable %q", e.Name) }

// ExpandString substitutes every reference in s as text.
func (v *Vars) ExpandString(s string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var err error
	out := templateRE().ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, `\`) {
			return m[1:]
		}
		name := templateRE().FindStringSubmatch(m)[1]
		val, ok := v.Lookup(name)
		if !ok {
			if err == nil {
				err = &UndefinedError{Name: name}
			}
			return m
		}
		return assert.ToString(val)
	})
	return out, err
}

// Expand substitutes references in x recursively (maps, slices, strings; map keys as text).
// A string that is exactly one reference yields the variable's typed value.
func (v *Vars) Expand(x any) (any, error) {
	switch t := x.(type) {
	case string:
		if m := wholeRE().FindStringSubmatch(t); m != nil {
			val, ok := v.Lookup(m[1])
			if !ok {
				return nil, &UndefinedError{Name: m[1]}
			}
			return val, nil
		}
		return v.ExpandString(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			k2, err := v.ExpandString(k)
			if err != nil {
				return nil, err
			}
			if out[k2], err = v.Expand(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var err error
			if out[i], err = v.Expand(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, e := range t {
			s, err := v.ExpandString(e)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	return x, nil
}

// ExpandMap expands an input object (tool arguments).
func (v *Vars) ExpandMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out, err := v.Expand(m)
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// Values returns every defined variable (environment lookups excluded), resolved by precedence.
func (v *Vars) Values() map[string]any {
	out := map[string]any{}
	for _, l := range v.layers {
		maps.Copy(out, l)
	}
	v.mu.RLock()
	maps.Copy(out, v.extracted)
	v.mu.RUnlock()
	return out
}

// has reports whether name is defined by a layer (not extracted, not env).
func (v *Vars) has(name string) bool {
	for _, l := range v.layers {
		if _, ok := l[name]; ok {
			return true
		}
	}
	return false
}

// IsSecretName reports whether a variable or header name suggests a secret value (it contains
// key, token, secret, password, passwd, credential or auth, case-insensitively). It is
// [redact.IsSecretName].
func IsSecretName(name string) bool { return redact.IsSecretName(name) }

// MinSecretLen is the shortest value the masker masks; shorter ones would garble every output.
const MinSecretLen = redact.MinLen

// Mask is what a secret is replaced with.
const Mask = redact.Mask

// Masker replaces registered secret values, in every form an output gives them (see
// [redact.Forms]), with "***". It is safe for concurrent use; the runner masks every result
// with it and the CLI passes every output through a [redact.Writer] over it.
type Masker = redact.Masker

// NewMasker returns an empty masker.
func NewMasker() *Masker { return redact.NewMasker() }

// RegisterServerSecrets registers what a server definition carries of secrets: the values of
// headers and env entries named like secrets, the password and secret-looking query parameters
// of its URL, and the values of secret-looking flags of its command line. Strings still holding
// {{references}} are skipped; call it again once they are expanded.
func RegisterServerSecrets(m *Masker, s *Server) {
	literal := func(v string) bool { return !strings.Contains(v, "{{") }
	for k, v := range s.Headers {
		if literal(v) {
			m.AddHeader(k, v)
		}
	}
	for k, v := range s.Env {
		if literal(v) {
			m.AddNamed(k, v)
		}
	}
	if literal(s.URL) {
		m.AddURL(s.URL)
	}
	var args []string
	for _, a := range append(strings.Fields(s.Command), s.Args...) {
		if !literal(a) {
			a = "" // keeps its place: a flag before it still names no value
		}
		args = append(args, a)
	}
	m.AddArgs(args)
}
