package redact

import (
	"bytes"
	"strings"
	"testing"
)

// TestMaskCutSecret: an excerpt cut short in the middle of a secret (by an assertion's 256-byte
// excerpt, a stderr tail) keeps none of its bytes, at the end before "…" nor at the start of a
// tail after it, through Mask and through a Writer; a cut that holds no piece of a secret, or
// fewer than MinLen bytes of one, is left alone.
func TestMaskCutSecret(t *testing.T) {
	const secret = "sk-live-7f3a9c2e41d8b6"
	m := NewMasker()
	m.Add(secret)
	for _, tt := range []struct{ in, want string }{
		{`got "token=sk-live-7f3a9…`, `got "token=***…`},
		{`got "token=` + strings.Repeat("x", 10) + `sk-l…`, `got "token=xxxxxxxxxx***…`},
		{"…9c2e41d8b6 was refused", "…*** was refused"},
		{`{"k":"sk-live-7f3a…"} and …a9c2e41d8b6`, `{"k":"***…"} and …***`},
		{"whole " + secret + " then cut…", "whole *** then cut…"},
		{"sk-…", "sk-…"}, // three bytes of it: below MinLen, as whole secrets are
		{"nothing here…", "nothing here…"},
		{"…unrelated tail", "…unrelated tail"},
	} {
		if got := m.Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
		var b bytes.Buffer
		w := NewWriter(&b, m)
		if _, err := w.Write([]byte(tt.in + "\n")); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(b.String(), "\n"); got != tt.want {
			t.Errorf("Writer(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
