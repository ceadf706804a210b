package spec

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   \t\n", nil},
		{"python", []string{"python"}},
		{"python -m my_server", []string{"python", "-m", "my_server"}},
		{"  a   b\tc\nd  ", []string{"a", "b", "c", "d"}},
		{`node server.js --name 'my server'`, []string{"node", "server.js", "--name", "my server"}},
		{`say "hello world"`, []string{"say", "hello world"}},
		{`a'b c'"d"e`, []string{"ab cde"}},
		{`'' ""`, []string{"", ""}},
		{`x '' y`, []string{"x", "", "y"}},
		{`'it'\''s'`, []string{"it's"}},
		{`"a \"quoted\" word"`, []string{`a "quoted" word`}},
		{`"back\\slash \$HOME \` + "`" + `cmd\` + "`" + `"`, []string{"back\\slash $HOME `cmd`"}},
		{`"keep \n and \x"`, []string{`keep \n and \x`}},
		{`'no \escapes "here"'`, []string{`no \escapes "here"`}},
		{`a\ b`, []string{"a b"}},
		{`\'x\"`, []string{`'x"`}},
		{"a\\\nb", []string{"ab"}},
		{"\"a\\\nb\"", []string{"ab"}},
		{`$HOME *.go ~ | > x`, []string{"$HOME", "*.go", "~", "|", ">", "x"}},
		{`--json='{"a": 1}'`, []string{`--json={"a": 1}`}},
		{"ünïcode 'ß ü'", []string{"ünïcode", "ß ü"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if err != nil {
			t.Errorf("Split(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Split(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		reason string
	}{
		{`a 'b`, 2, "unterminated single quote"},
		{`a "b`, 2, "unterminated double quote"},
		{`"a\"`, 0, "unterminated double quote"},
		{`abc\`, 3, "trailing backslash"},
	}
	for _, tt := range tests {
		_, err := Split(tt.in)
		var se *SplitError
		if !errors.As(err, &se) {
			t.Errorf("Split(%q) error = %v, want *SplitError", tt.in, err)
			continue
		}
		if se.Offset != tt.offset || se.Reason != tt.reason {
			t.Errorf("Split(%q) = {%d %q}, want {%d %q}", tt.in, se.Offset, se.Reason, tt.offset, tt.reason)
		}
	}
}

func TestJoinRoundTrip(t *testing.T) {
	words := [][]string{
		{"python", "-m", "srv"},
		{"a b", "", "it's", `"q"`, `back\slash`, "$HOME", "tab\there", "new\nline"},
		{"--args={\"x\":1}"},
	}
	for _, w := range words {
		joined := Join(w)
		got, err := Split(joined)
		if err != nil {
			t.Fatalf("Split(Join(%q)) = %v", w, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("round trip of %q via %q (-want +got):\n%s", w, joined, diff)
		}
	}
	if got := Join([]string{"python", "-m", "srv"}); got != "python -m srv" {
		t.Errorf("Join kept safe words quoted: %q", got)
	}
}

func FuzzSplitJoin(f *testing.F) {
	for _, s := range []string{"a b", `'x' "y"`, `a\ b`, `"\$"`, "''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		again, err := Split(Join(words))
		if err != nil {
			t.Fatalf("Split(Join(%q)): %v", words, err)
		}
		if !slices.Equal(words, again) {
			t.Fatalf("round trip changed %q into %q", words, again)
		}
	})
}
