package schema

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestPublishedEqualsFiles(t *testing.T) {
	files, err := filepath.Glob("*.v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(Names()); got != len(files) || got < 11 {
		t.Fatalf("Names() has %d schemas, the directory %d: %v", got, len(files), Names())
	}
	for _, name := range Names() {
		got, err := Published(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(FileName(name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Published(%q) differs from %s", name, FileName(name))
		}
		if !bytes.Contains(got, []byte(`"$id": "`+BaseURL+FileName(name)+`"`)) {
			t.Errorf("%s: $id is not %s%s", name, BaseURL, FileName(name))
		}
	}
	if _, err := Published("nope"); err == nil {
		t.Error("Published(nope) gave no error")
	}
}
