package ui

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRecordingsAPI checks that the list is `record list` of the project's directory, that a
// recording is opened by a plain name only, and that a replay run takes one.
func TestRecordingsAPI(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var calls [][]string
	exec := func(_ context.Context, args []string, stdout, _ io.Writer) int {
		mu.Lock()
		calls = append(calls, args)
		mu.Unlock()
		io.WriteString(stdout, `{"dir":"x","recordings":[]}`)
		return 0
	}
	s, base := startUI(t, Options{Dir: dir, Exec: exec})
	recs := filepath.Join(dir, ".mcpspec", "recordings")
	if err := os.MkdirAll(recs, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := `{"mcpspecRecording":1,"server":"testserver","transport":"stdio","started":"2026-01-02T15:04:05Z"}
{"t":1.5,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"ping"}}
{"t":2.25,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{}}}
{"t":3,"dir":"s2c","text":"not json <img src=x>"}
`
	if err := os.WriteFile(filepath.Join(recs, "r1.jsonl"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	h := map[string]string{"Authorization": "Bearer " + s.Token(), "Content-Type": "application/json"}
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/api/recordings", "", 200, `"recordings":[]`},
		{"GET", "/api/recordings/r1", "", 200, `"frames":[{"ms":1.5,"dir":"c2s","data":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"},{"ms":2.25,"dir":"s2c","data":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"},{"ms":3,"dir":"s2c","data":"not json \u003cimg src=x\u003e"}],"total":3}`},
		{"GET", "/api/recordings/nope", "", 404, "nope.jsonl"},
		{"GET", "/api/recordings/..%2Fsecret", "", 400, "not a plain name"},
		{"POST", "/api/runs", `{"kind":"replay","recording":"../r1","server":"testserver"}`, 400, "needs the name of one of this project's recordings"},
		{"POST", "/api/runs", `{"kind":"replay","recording":"r1","server":"sh -c 'touch pwned'"}`, 400, "not in this project's collections"},
		{"POST", "/api/runs", `{"kind":"replay","recording":"r1","server":"testserver"}`, 202, `"kind":"replay"`},
	} {
		res := do(t, base, req{method: c.method, path: c.path, body: c.body, header: h})
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s %s: %d %s, want %d with %s", c.method, c.path, c.body, res.StatusCode, b, c.code, c.want)
		}
	}
	s.runs.wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{
		{"record", "list", "--dir", recs, "--json"},
		{"record", "replay", "r1", "--server", "testserver", "--json", "--dir", recs},
	}
	if !slices.EqualFunc(calls, want, slices.Equal) {
		t.Errorf("verbs run %q, want %q", calls, want)
	}
}
