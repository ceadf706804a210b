package protocol

import (
	"slices"
	"strings"
	"testing"
)

func TestSupportedVersions(t *testing.T) {
	v := SupportedVersions()
	if !slices.IsSortedFunc(v, func(a, b string) int { return strings.Compare(b, a) }) || len(slices.Compact(slices.Clone(v))) != len(v) {
		t.Errorf("SupportedVersions() = %v, want distinct versions newest first", v)
	}
	v[0] = "changed"
	if SupportedVersions()[0] != Version20260728 {
		t.Error("SupportedVersions shares its slice with the caller")
	}
}
