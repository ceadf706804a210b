package textfmt

import "testing"

// TestClean: the escapes a hostile server sends (OSC 52 to the clipboard, OSC 0 to the title, a
// CR that overwrites the line, C1 CSI) print as U+FFFD; newlines and tabs stay.
func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"ok\x1b]52;c;ZXZpbA==\x07":     "ok\uFFFD]52;c;ZXZpbA==\uFFFD",
		"\x1b]0;pwned\x07title":        "\uFFFD]0;pwned\uFFFDtitle",
		"fail\rPASS  all tests passed": "fail\uFFFDPASS  all tests passed",
		"\u009b31mred":                 "\uFFFD31mred",
		"a\n\tb":                       "a\n\tb",
		"bad \xff utf8":                "bad \uFFFD utf8",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}
