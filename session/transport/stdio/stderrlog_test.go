package stdio

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// checkBounded checks that a stderr file holds the first lines whole, then (when anything
// was dropped) a marker counting exactly the bytes missing, then the last lines whole, and that
// it is no larger than the bounds allow. all is what was written.
func checkBounded(t *testing.T, data, all, linePrefix string, head, tail int64) {
	t.Helper()
	if int64(len(data)) > head+2*tail+200 {
		t.Errorf("file of %d bytes, over head %d + 2×tail %d", len(data), head, tail)
	}
	m := regexp.MustCompile(`\n?\[mcpspec: (\d+) bytes of stderr dropped here; [^\]]*\]\n`).FindStringSubmatchIndex(data)
	if m == nil {
		if data != all {
			t.Errorf("no marker, and the file (%d bytes) is not all of stderr (%d bytes)", len(data), len(all))
		}
		return
	}
	first, last := data[:m[0]], data[m[1]:]
	dropped, _ := strconv.Atoi(data[m[2]:m[3]])
	if !strings.HasPrefix(all, first) || !strings.HasSuffix(all, last) {
		t.Errorf("the file is not the start and the end of stderr: %q … %q", first[max(0, len(first)-30):], last[:min(30, len(last))])
	}
	if len(first)+dropped+len(last) != len(all) {
		t.Errorf("head %d + dropped %d + tail %d != %d bytes written", len(first), dropped, len(last), len(all))
	}
	if int64(len(last)) < tail-100 {
		t.Errorf("tail of %d bytes, want about %d", len(last), tail)
	}
	if !strings.HasPrefix(last, linePrefix) {
		t.Errorf("the tail does not start at a line: %q", last[:min(30, len(last))])
	}
}

func TestStderrLogBounds(t *testing.T) {
	for _, writeSize := range []int{3, 100, 4096, 100000} {
		t.Run(fmt.Sprint(writeSize), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.log")
			l, err := createStderrLog(path)
			if err != nil {
				t.Fatal(err)
			}
			l.headMax, l.tailMax = 1000, 5000
			var all strings.Builder
			for i := range 5000 {
				fmt.Fprintf(&all, "line %d of the server's stderr\n", i)
			}
			for s := all.String(); len(s) > 0; {
				n := min(writeSize, len(s))
				if _, err := l.Write([]byte(s[:n])); err != nil {
					t.Fatal(err)
				}
				s = s[n:]
				if l.size > 1000+2*5000+200+int64(writeSize) {
					t.Fatalf("file grew to %d bytes while written", l.size)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkBounded(t, string(data), all.String(), "line ", 1000, 5000)
		})
	}
}

func TestStderrLogSmallIsWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	if err := os.WriteFile(path, []byte("old content, longer than the new one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := createStderrLog(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("hello\n"))
	l.Close()
	data, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(data) != "hello\n" || st.Mode().Perm() != 0o600 {
		t.Errorf("file %q mode %v, want hello and 0600", data, st.Mode().Perm())
	}
}
