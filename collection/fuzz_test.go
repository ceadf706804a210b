package collection

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and always returns exactly one of a collection or
// an error: go test -fuzz=FuzzParse ./collection
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range append(files, more...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("server: testserver\ntests: [{id: a, call: b, expect: [{expr: 'len(response) > 0'}]}]"))
	f.Add([]byte("server: testserver\ntests: [{id: a, call: b, dependsOn: [a]}]"))
	f.Add([]byte("a: &x [*x]"))
	l, err := NewLoader(&LoadOptions{LookupEnv: func(k string) (string, bool) { return "v-" + k, k != "" }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := l.Parse("fuzz.yaml", data)
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned collection %v and error %v", c != nil, err)
		}
		if c != nil {
			for _, tt := range c.Tests {
				if tt.Step == nil || tt.ID == "" || tt.Timeout <= 0 {
					t.Fatalf("loaded an incomplete test: %+v", tt)
				}
			}
		}
	})
}
