package reporters

import (
	"strings"
	"testing"
)

func TestYAMLishScalar(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain text", "plain text"},
		{"false", `"false"`},
		{"a: b", "'a: b'"},
		{"héllo 🎉", `"héllo 🎉"`},
		{"one\n | two", "|\n    one\n     | two"},
		{"one\ntwo\n", "|\n    one\n    two"},
		{" lead\nx", `" lead\nx"`},
		{"a\n\nb", `"a\n\nb"`},
		{"a \nb", `"a \nb"`},
		{"a\n...\nb", `"a\n...\nb"`},
		{"nul\x00 bell\a\nx", `"nul\x00 bell\x07\nx"`},
		{`q"b\`, `q"b\`},
		{"q\"b\\\nx", "|\n    q\"b\\\n    x"},
		{"tab\tin\nx", `"tab\tin\nx"`},
		{"sep\u2028x\ny", `"sep\u2028x\ny"`},
	}
	for _, tc := range tests {
		if got := yamlishScalar(tc.in, 4); got != tc.want {
			t.Errorf("yamlishScalar(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestExprErrorRendering checks how every human-facing reporter shows an expression that
// failed to evaluate: it has an expected value but no actual one (no empty "actual" row), and
// its message spans lines (the HTML keeps the lines, in monospace).
func TestExprErrorRendering(t *testing.T) {
	run := multilineRun()
	tc := run.Collections[0].Tests[0]
	tc.Failures[0].Actual = ""
	run.Collections[0].Tests = run.Collections[0].Tests[:1]
	for _, name := range []string{"console", "markdown", "html"} {
		out := string(render(t, name, nil, run, false))
		if strings.Contains(out, "actual") {
			t.Errorf("%s shows an actual row for a failure without an actual value:\n%s", name, out)
		}
		if !strings.Contains(out, "expected") {
			t.Errorf("%s lacks the expected row:\n%s", name, out)
		}
	}
	html := string(render(t, "html", nil, run, false))
	if !strings.Contains(html, `<div class="msg mono">expression &#34;text &#43; vars.nope&#34; failed: invalid operation: string &#43; &lt;nil&gt; (1:6)`+"\n | text &#43; vars.nope\n | .....^</div>") {
		t.Errorf("html does not keep the expression error's lines in a monospace block:\n%s", html)
	}
}
