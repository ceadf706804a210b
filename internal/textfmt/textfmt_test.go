package textfmt

import (
	"strings"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{850 * time.Microsecond, "850µs"},
		{2500 * time.Microsecond, "2.5ms"},
		{12 * time.Millisecond, "12ms"},
		{1250 * time.Millisecond, "1.25s"},
		{123 * time.Second, "2m3s"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 tests"}, {1, "1 test"}, {2, "2 tests"}} {
		if got := Plural(tc.n, "test"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestShortCommit(t *testing.T) {
	for in, want := range map[string]string{"": "", "abc": "abc", "0123456789abcdef": "0123456789ab"} {
		if got := ShortCommit(in); got != want {
			t.Errorf("ShortCommit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"", 3, ""}, {"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"abc", 0, "…"}} {
		if got := Excerpt([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", 310)
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"", 5, ""},
		{"one\r\n\n  \ntwo\n", 5, "  one\n  two"},
		{"a\nb\nc\nd", 2, "  c\n  d"},
		{long, 1, "  " + long[:300] + "…"},
	} {
		if got := LastLines(tc.in, tc.n); got != tc.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestLastLinesKeepsTheErrorLine: a Node crash's RangeError line, above its stack frames, is
// kept in place of the oldest tail lines.
func TestLastLinesKeepsTheErrorLine(t *testing.T) {
	stderr := `server starting
/app/index.js:12
RangeError: Maximum call stack size exceeded
    at f (/app/index.js:12:3)
    at f (/app/index.js:12:3)
    at f (/app/index.js:12:3)
    at f (/app/index.js:12:3)
    at f (/app/index.js:12:3)
    at g (/app/index.js:20:1)
`
	want := "  RangeError: Maximum call stack size exceeded\n  …\n      at f (/app/index.js:12:3)\n      at f (/app/index.js:12:3)\n      at g (/app/index.js:20:1)"
	if got := LastLines(stderr, 5); got != want {
		t.Errorf("LastLines =\n%s\nwant\n%s", got, want)
	}
	plain := "a\nb\nc\nd\ne\nf\ng\n"
	if got := LastLines(plain, 3); got != "  e\n  f\n  g" {
		t.Errorf("LastLines without an error line = %q", got)
	}
	if got := LastLines("x\npanic: boom\ny\n", 5); got != "  x\n  panic: boom\n  y" {
		t.Errorf("short input = %q", got)
	}
}
