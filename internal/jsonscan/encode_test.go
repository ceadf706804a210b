package jsonscan

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString checks that AppendString writes JSON that decodes to what encoding/json
// makes of the same string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f", "é😀", "\xff\xfe", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if got != w {
			t.Fatalf("AppendString(%q) decodes to %q, encoding/json to %q", s, got, w)
		}
	})
}

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"":               `""`,
		"plain":          `"plain"`,
		"q\"b\\":         `"q\"b\\"`,
		"\n\r\t\x00\x1f": `"\n\r\t\u0000\u001f"`,
		"<&>":            `"<&>"`,
		"a\u2028b\u2029": `"a\u2028b\u2029"`,
		"é😀":             `"é😀"`,
		"a\xff\xfeb":     `"a\ufffd\ufffdb"`,
	} {
		if got := string(AppendString([]byte("x"), in)); got != "x"+want {
			t.Errorf("AppendString(%q) = %s, want x%s", in, got, want)
		}
	}
}
