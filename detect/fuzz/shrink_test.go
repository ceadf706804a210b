package fuzz

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// depth returns the nesting depth of a JSON-like text (strings ignored for these tests).
func depth(b []byte) int {
	d, m := 0, 0
	for _, c := range b {
		switch c {
		case '[', '{':
			d++
			m = max(m, d)
		case ']', '}':
			d--
		}
	}
	return m
}

// counting wraps a predicate and counts its calls.
func counting(pred func([]byte) bool) (func([]byte) bool, *int) {
	n := 0
	return func(b []byte) bool { n++; return pred(b) }, &n
}

func TestFindRuns(t *testing.T) {
	t.Parallel()
	got := findRuns([]byte(`xAAAAAAAAAy[{"a":[{"a":[{"a":[{"a":[{"a":[{"a":[{"a":[{"a":0}]}]}]}]}]}]}]}]z`))
	want := []run{{1, 1, 9}, {11, 6, 8}, {60, 2, 8}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(run{})); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
}

func TestShrinkRunsKeepsNestingBalanced(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ open, close string }{{"[", "]"}, {`{"a":`, "}"}, {`[{"a":`, "}]"}} {
		frame := []byte(`{"jsonrpc":"2.0","id":@ID@,"method":"m","params":{"x":` + strings.Repeat(tt.open, 5000) + "0" + strings.Repeat(tt.close, 5000) + `}}`)
		pred, n := counting(func(b []byte) bool { return jsonLike(b) && depth(b) > 300 })
		out := shrinkRuns(frame, pred)
		if d := depth(out); !jsonLike(out) || d <= 300 || d > 302 {
			t.Errorf("%s: depth %d after shrinking (valid %v), want just over 300", tt.open, d, jsonLike(out))
		}
		if *n > 40 {
			t.Errorf("%s: %d predicate calls, want a binary search", tt.open, *n)
		}
	}
}

func TestShrinkBytesStringsAndMembers(t *testing.T) {
	t.Parallel()
	args := []byte(`{"keep":"` + strings.Repeat("A", 100000) + `","drop1":1,"drop2":[1,2,3],"drop3":{"x":"y"}}`)
	out := shrinkBytes(args, func(b []byte) bool {
		var m map[string]string
		if json.Unmarshal(b, &m) != nil {
			var any map[string]any
			if json.Unmarshal(b, &any) != nil {
				return false
			}
			s, _ := any["keep"].(string)
			return len(s) >= 1000
		}
		return len(m["keep"]) >= 1000
	})
	if want := `{"keep":"` + strings.Repeat("A", 1000) + `"}`; string(out) != want {
		t.Errorf("shrunk to %d bytes: %.80s…, want the 1000-byte string alone", len(out), out)
	}
	// Many members go by halves, not one by one.
	var b strings.Builder
	b.WriteString(`{"params":{`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("0", 3) + string(rune('a'+i%26)) + `":` + "1")
	}
	b.WriteString(`},"needle":true}`)
	pred, n := counting(func(c []byte) bool { return bytes.Contains(c, []byte(`"needle":true`)) && jsonLike(c) })
	out = shrinkBytes([]byte(b.String()), pred)
	if string(out) != `{"params":{},"needle":true}` && string(out) != `{"needle":true}` {
		t.Errorf("members: %.120s", out)
	}
	if *n > 120 {
		t.Errorf("members: %d predicate calls", *n)
	}
}

func TestDdmin(t *testing.T) {
	t.Parallel()
	// Not JSON: bytes go by chunks while the fault (a 0xff byte) stays.
	in := []byte("{\"jsonrpc\":\"2.0\",\"method\":\"p\xffing\"}")
	out := shrinkBytes(in, func(b []byte) bool { return bytes.IndexByte(b, 0xff) >= 0 })
	if d := cmp.Diff([]byte{0xff}, out); d != "" {
		t.Errorf("ddmin (-want +got):\n%s", d)
	}
}

func TestSmallest(t *testing.T) {
	t.Parallel()
	calls := 0
	k := smallest(1_000_000, func(k int) bool { calls++; return k >= 777 })
	if k != 777 || calls > 25 {
		t.Errorf("smallest = %d after %d calls", k, calls)
	}
	if smallest(10, func(int) bool { return true }) != 0 {
		t.Error("smallest does not reach 0")
	}
}

// TestShrinkStopsWhenBudgetSpent: a predicate that says no ends every strategy.
func TestShrinkStopsWhenBudgetSpent(t *testing.T) {
	t.Parallel()
	in := []byte(`{"a":"` + strings.Repeat("x", 5000) + `","b":[` + strings.Repeat("1,", 999) + `1]}`)
	pred, n := counting(func([]byte) bool { return false })
	if out := shrinkBytes(in, pred); !bytes.Equal(out, in) {
		t.Error("changed without a yes")
	}
	if *n > 100 {
		t.Errorf("%d calls with no budget", *n)
	}
}
