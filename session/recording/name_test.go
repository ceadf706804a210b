package recording

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "prod-2026.11_28": true, "9lives": true, strings.Repeat("x", 100): true,
		"": false, strings.Repeat("x", 101): false, ".hidden": false, "-flag": false, "_x": false,
		"../up": false, "a/b": false, "a b": false, "é": false, "a\n": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
