package envfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/envfile"
)

func TestParseConventions(t *testing.T) {
	long := strings.Repeat("x", 64<<10) // one 64 KiB line: no line length limit
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"plain", "who=dave\n", map[string]string{"who": "dave"}},
		{"no final newline", "who=dave", map[string]string{"who": "dave"}},
		{"inline comment on an unquoted value", "who=dave # the user\n", map[string]string{"who": "dave"}},
		{"inline comment after a tab", "who=dave\t# the user\n", map[string]string{"who": "dave"}},
		{"# inside a word is kept", "color=#fff\nurl=http://x/#frag\n", map[string]string{"color": "#fff", "url": "http://x/#frag"}},
		{"comment lines and blank lines", "# a comment\n\n   \n  # indented\nA=1\n", map[string]string{"A": "1"}},
		{"export prefix", "export A=1\nexport\tB=2\n", map[string]string{"A": "1", "B": "2"}},
		{"a variable named export", "export=1\n", map[string]string{"export": "1"}},
		{"empty value", "A=\nB= \nC= # nothing\n", map[string]string{"A": "", "B": "", "C": ""}},
		{"blanks around = and the value", "  A  =  one two  \n", map[string]string{"A": "one two"}},
		{"single quotes are literal", `A='a\nb $X # not a comment'` + "\n", map[string]string{"A": `a\nb $X # not a comment`}},
		{"double quotes with escapes", `A="a\nb\tc \"q\" \\ \$ \x"` + "\n", map[string]string{"A": "a\nb\tc \"q\" \\ $ \\x"}},
		{"a double-quoted value ending in a backslash", `A="dir\\"` + "\n", map[string]string{"A": `dir\`}},
		{"comment after a quoted value", `A="x # y" # a comment` + "\n", map[string]string{"A": "x # y"}},
		{"multi-line double quotes", "A=\"line1\nline2\"\nB=2\n", map[string]string{"A": "line1\nline2", "B": "2"}},
		{"multi-line single quotes", "A='-----BEGIN KEY-----\nabc\n-----END KEY-----'\n", map[string]string{"A": "-----BEGIN KEY-----\nabc\n-----END KEY-----"}},
		{"CRLF line ends", "A=1\r\nB=\"x\r\ny\"\r\nC='z'\r\n", map[string]string{"A": "1", "B": "x\ny", "C": "z"}},
		{"nothing is interpolated", "A=1\nB=$A ${A}\n", map[string]string{"A": "1", "B": "$A ${A}"}},
		{"the last of a key given twice wins", "A=1\nA=2\n", map[string]string{"A": "2"}},
		{"names with dots and dashes", "a.b-c_D9=1\n", map[string]string{"a.b-c_D9": "1"}},
		{"a byte-order mark", "\ufeffA=1\n", map[string]string{"A": "1"}},
		{"a 64 KiB line", "big=" + long + "\nafter=1\n", map[string]string{"big": long, "after": "1"}},
		{"a 64 KiB quoted line", "big=\"" + long + "\"\n", map[string]string{"big": long}},
		{"empty file", "", map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := envfile.Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const secret = "hunter2-s3cret"
	tests := []struct {
		name, in string
		line     int
		msg      string
	}{
		{"no =", "A=1\n" + secret + "\n", 2, "not a KEY=VALUE line"},
		{"no = at the end", "A=1\n\n" + secret, 3, "not a KEY=VALUE line"},
		{"a space in the name", "A=1\nmy key=" + secret + "\n", 2, "a name cannot hold"},
		{"= without a name", "=" + secret + "\n", 1, "starts with = but no name"},
		{"unclosed double quote names the line it opened on", "A=1\nB=\"" + secret + "\nC=3\n", 2, `the " opened here is never closed`},
		{"unclosed single quote", "\n\nB='" + secret + "\n", 3, "the ' opened here is never closed"},
		{"text after a closing quote", "A=1\nB=\"x\" " + secret + "\n", 2, "unexpected text after the closing quote of B"},
		{"line count goes on after a multi-line value", "A=\"1\n2\n3\"\nbad line\n", 4, "a name cannot hold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := envfile.Parse([]byte(tc.in))
			var se *envfile.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got line %d %q, want line %d and %q", se.Line, se.Msg, tc.line, tc.msg)
			}
			if se.Hint == "" {
				t.Error("no hint")
			}
			if strings.Contains(se.Error()+se.Hint, secret) {
				t.Errorf("the error quotes the value: %v (%s)", se, se.Hint)
			}
		})
	}
}

// FuzzParse checks that no input panics, that errors name a line of the input, and that
// what Parse accepts and writes back as double-quoted lines reads the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"A=1\n", "export A='x'\n", "A=\"a\\nb\" # c\n", "A=\"x\ny\"", "# c\n\nB= v #c\r\n", "A='", "=", "A=\"\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := envfile.Parse(data)
		if err != nil {
			var se *envfile.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if lines := strings.Count(string(data), "\n") + 1; se.Line < 1 || se.Line > lines {
				t.Fatalf("error on line %d of a %d-line input", se.Line, lines)
			}
			return
		}
		var b strings.Builder
		for k, v := range got {
			r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
			b.WriteString(k + `="` + r.Replace(v) + "\"\n")
		}
		again, err := envfile.Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-reading %q: %v", b.String(), err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("round trip (-first +again):\n%s", d)
		}
	})
}
