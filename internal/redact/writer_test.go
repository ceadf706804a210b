package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// writeSplit writes s through a fresh Writer in the pieces cut at the given offsets, flushes,
// and returns what came out.
func writeSplit(t testing.TB, m *Masker, s string, cuts ...int) string {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out, m)
	last := 0
	for _, c := range append(cuts, len(s)) {
		if c < last || c > len(s) {
			continue
		}
		if n, err := w.Write([]byte(s[last:c])); err != nil || n != c-last {
			t.Fatalf("Write = %d, %v", n, err)
		}
		last = c
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestWriterMasksAcrossWrites splits outputs holding secrets at every offset (and every pair of
// offsets for short ones): the Writer must give exactly what masking the whole output gives.
func TestWriterMasksAcrossWrites(t *testing.T) {
	m := NewMasker()
	for _, s := range nasty {
		m.Add(s)
	}
	m.Add("abcd")
	m.Add("abcdefgh") // a secret that begins with another
	m.Add("aaaab")    // a secret whose prefix repeats
	texts := []string{
		`{"actual":"` + jsonEscape(nasty["quote and backslash"], true) + `","x":1}`,
		"ok 1 - " + nasty["html"] + "\n# " + xmlEscape(nasty["everything"]) + "\n",
		"x abcdefgh y abcd z abcdefg aaaaaaaab aaaa",
		"  message: |\n    CORE1line\n    nextCORE2\n",
		strings.Repeat("a", 40) + "b",
	}
	for _, text := range texts {
		want := m.Mask(text)
		for i := 0; i <= len(text); i++ {
			if got := writeSplit(t, m, text, i); got != want {
				t.Fatalf("split at %d of %q:\n got %q\nwant %q", i, text, got, want)
			}
			if len(text) > 80 {
				continue
			}
			for j := i; j <= len(text); j++ {
				if got := writeSplit(t, m, text, i, j); got != want {
					t.Fatalf("split at %d and %d of %q:\n got %q\nwant %q", i, j, text, got, want)
				}
			}
		}
	}
}

// TestWriterDoesNotDelay checks that output which cannot begin a secret passes through at
// once, byte by byte, so streamed lines appear as they are written.
func TestWriterDoesNotDelay(t *testing.T) {
	m := NewMasker()
	m.Add("s3cr3t-value")
	var out bytes.Buffer
	w := NewWriter(&out, m)
	line := "✓ collection › test s3 3ms\n"
	for i := range len(line) {
		_, _ = w.Write([]byte{line[i]})
		got := out.String()
		held, ok := strings.CutPrefix(line[:i+1], got)
		if !ok || !strings.HasPrefix("s3cr3t-value", held) {
			t.Fatalf("after %d bytes out is %q", i+1, got)
		}
	}
	if out.String() != line {
		t.Fatalf("a finished line was held: %q", out.String())
	}
	_, _ = w.Write([]byte("token s3cr"))
	if got := out.String(); got != line+"token " {
		t.Fatalf("a possible secret was not held: %q", got)
	}
	_, _ = w.Write([]byte("atch\n"))
	if got := out.String(); got != line+"token s3cratch\n" {
		t.Fatalf("held bytes not released once they could not be a secret: %q", got)
	}
}

func TestWriterWithoutSecretsPassesThrough(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, nil)
	_, _ = w.Write([]byte("anything"))
	if out.String() != "anything" {
		t.Fatalf("out = %q", out.String())
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterKeepsTheFirstError(t *testing.T) {
	m := NewMasker()
	m.Add("secret")
	w := NewWriter(&failWriter{n: 1}, m)
	if _, err := w.Write([]byte("one ")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("two ")); err == nil {
		t.Fatal("no error from a failing writer")
	}
	if _, err := w.Write([]byte("three")); err == nil || w.Flush() == nil {
		t.Fatal("the error was not kept")
	}
}

// FuzzWriter checks the Writer against Mask for any secrets, text and split points.
func FuzzWriter(f *testing.F) {
	f.Add("p@ss\"w\\ord", "abcd", `got "p@ss\"w\\ord" and abcd`, uint16(7), uint16(19))
	f.Add("aaaab", "aab\naab", "aaaaaaaab aab\n   aab", uint16(3), uint16(9))
	f.Fuzz(func(t *testing.T, s1, s2, text string, c1, c2 uint16) {
		if len(text) > 2000 || len(s1) > 100 || len(s2) > 100 {
			return
		}
		m := NewMasker()
		m.Add(s1)
		m.Add(s2)
		want := m.Mask(text)
		i, j := int(c1)%(len(text)+1), int(c2)%(len(text)+1)
		if got := writeSplit(t, m, text, min(i, j), max(i, j)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

func BenchmarkWriter(b *testing.B) {
	m := NewMasker()
	for _, s := range nasty {
		m.Add(s)
	}
	text := strings.Repeat(`{"name":"a test","status":"passed","message":"expected \"x\", got \"y\""}`+"\n", 1000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		w := NewWriter(discard{}, m)
		for i := 0; i < len(text); i += 64 {
			_, _ = w.Write([]byte(text[i:min(i+64, len(text))]))
		}
		_ = w.Flush()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
