package reporters

import "testing"

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
