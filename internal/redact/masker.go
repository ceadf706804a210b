package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the shortest value a [Masker] masks; shorter ones would garble every output.
const MinLen = 4

// Mask is what a secret is replaced with.
const Mask = "***"

// secretNameRE matches names whose values are secrets.
var secretNameRE = regexp.MustCompile(`(?i)key|token|secret|password|passwd|credential|auth`)

// IsSecretName reports whether a variable, header, env entry or query parameter name suggests
// a secret value (it contains key, token, secret, password, passwd, credential or auth,
// case-insensitively).
func IsSecretName(name string) bool { return secretNameRE.MatchString(name) }

// Masker replaces registered secrets, in every form of [Forms], with [Mask]. It is safe for
// concurrent use; a nil *Masker masks nothing.
type Masker struct {
	mu      sync.Mutex            // guards secrets and serializes rebuilding table
	secrets map[string][]string   // each secret's forms
	table   atomic.Pointer[table] // nil until the first secret
}

// table is an immutable snapshot of the forms of every secret.
type table struct {
	replacer *strings.Replacer
	// byFirst lists the forms by their first byte, for [Writer]'s hold-back.
	byFirst [256][]string
	maxLen  int
}

// NewMasker returns an empty masker.
func NewMasker() *Masker { return &Masker{secrets: map[string][]string{}} }

// Add registers a secret value; values shorter than [MinLen] bytes are ignored. Each line of a
// multi-line value (a PEM key) is registered too, as outputs may indent, colour or quote the
// lines of a value one by one.
func (m *Masker) Add(secret string) {
	if m == nil || len(secret) < MinLen {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.secrets[secret]; ok {
		return
	}
	m.secrets[secret] = Forms(secret)
	if strings.ContainsAny(secret, lineBreaks) {
		for _, l := range strings.FieldsFunc(secret, func(r rune) bool { return strings.ContainsRune(lineBreaks, r) }) {
			if l = strings.TrimSpace(l); len(l) >= MinLen {
				m.secrets[l] = Forms(l)
			}
		}
	}
	seen := map[string]bool{}
	var forms []string
	for _, fs := range m.secrets {
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	// Longest first, so a form containing another is masked whole.
	slices.SortFunc(forms, longestFirst)
	t := &table{}
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
		t.byFirst[f[0]] = append(t.byFirst[f[0]], f)
		t.maxLen = max(t.maxLen, len(f))
	}
	t.replacer = strings.NewReplacer(pairs...)
	m.table.Store(t)
}

// Mask returns s with every form of every registered secret replaced by [Mask].
func (m *Masker) Mask(s string) string {
	if m == nil {
		return s
	}
	t := m.table.Load()
	if t == nil {
		return s
	}
	return t.replace(s)
}

// Cut is the mark every output puts where it cut a text short.
const Cut = "…"

// replace masks every form in s and then what a cut left of one: an excerpt cut short in the
// middle of a secret ends with the secret's first bytes before [Cut] (or, a tail, starts with its
// last bytes after it), which no whole form matches. Text that ends at a Cut with at least
// [MinLen] bytes that begin a form, or starts after one with at least MinLen bytes that end
// one, is masked too. Masking before cutting is the rule; this catches every cut made
// before the masker saw the text (an assertion's excerpt, a stderr tail).
func (t *table) replace(s string) string {
	s = t.replacer.Replace(s)
	if !strings.Contains(s, Cut) {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, Cut)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		before := rest[:i]
		if n := t.prefixBefore(before); n > 0 {
			before = before[:len(before)-n] + Mask
		}
		b.WriteString(before)
		b.WriteString(Cut)
		rest = rest[i+len(Cut):]
		if n := t.suffixAfter(rest); n > 0 {
			b.WriteString(Mask)
			rest = rest[n:]
		}
	}
	return b.String()
}

// prefixBefore returns the length of the longest end of s, at least [MinLen] bytes, that is a
// proper beginning of a form; 0 when there is none.
func (t *table) prefixBefore(s string) int {
	for n := min(len(s), t.maxLen-1); n >= MinLen; n-- {
		tail := s[len(s)-n:]
		for _, f := range t.byFirst[tail[0]] {
			if len(f) > n && strings.HasPrefix(f, tail) {
				return n
			}
		}
	}
	return 0
}

// suffixAfter returns the length of the longest beginning of s, at least [MinLen] bytes, that
// is a proper end of a form; 0 when there is none.
func (t *table) suffixAfter(s string) int {
	for n := min(len(s), t.maxLen-1); n >= MinLen; n-- {
		head := s[:n]
		for _, fs := range t.byFirst {
			for _, f := range fs {
				if len(f) > n && strings.HasSuffix(f, head) {
					return n
				}
			}
		}
	}
	return 0
}

// Len returns how many secrets are registered.
func (m *Masker) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.secrets)
}

// heldBack returns how many bytes at the end of s could be the beginning of a form: the length
// of the longest suffix of s that is a proper prefix of a form.
func (t *table) heldBack(s string) int {
	if t == nil {
		return 0
	}
	for i := max(0, len(s)-(t.maxLen-1)); i < len(s); i++ {
		tail := s[i:]
		for _, f := range t.byFirst[s[i]] {
			if len(f) > len(tail) && strings.HasPrefix(f, tail) {
				return len(tail)
			}
		}
	}
	return 0
}

// settled returns how much of s (the start of what remains of a stream) can be masked and
// written now, so that masking it alone gives what masking the whole stream would: the bytes
// from the returned offset on could begin a form that the rest of the stream completes. With
// leftmost-longest matching, as [strings.Replacer] does with forms longest first, a match that
// starts before that point is known in full; when one runs past it, the point moves to the
// match's end.
func (t *table) settled(s string) int {
	cut := len(s) - t.heldBack(s)
	if t == nil || t.heldBack(s[:cut]) == 0 {
		return cut // no form can straddle cut
	}
	for i := 0; i < cut; {
		f := t.longestAt(s, i)
		switch {
		case f == "":
			i++
		case i+len(f) > cut:
			return i + len(f)
		default:
			i += len(f)
		}
	}
	return cut
}

// longestAt returns the longest form that s holds at offset i, or "".
func (t *table) longestAt(s string, i int) string {
	for _, f := range t.byFirst[s[i]] {
		if strings.HasPrefix(s[i:], f) {
			return f
		}
	}
	return ""
}

// snapshot is the current table; nil when nothing is registered (or m is nil).
func (m *Masker) snapshot() *table {
	if m == nil {
		return nil
	}
	return m.table.Load()
}
