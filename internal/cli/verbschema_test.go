package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/mcptest"
)

// runVerb runs mcpspec in-process with args against an in-process reference server (its URL
// replaces "$URL" in args) and returns stdout and the exit code.
func runVerb(t *testing.T, args ...string) (string, ExitCode) {
	t.Helper()
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	for i, a := range args {
		switch a {
		case "$URL":
			args[i] = srv.URL
		case "$TMP":
			args[i] = t.TempDir()
		case "$TMP/b.svg":
			args[i] = filepath.Join(t.TempDir(), "b.svg")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, append([]string{"mcpspec"}, args...), &IO{Stdin: bytes.NewReader(nil), Stdout: &stdout, Stderr: &stderr, TempDir: t.TempDir(), NoHistory: true})
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return stdout.String(), code
}

// checkSchema validates doc against schema/NAME.
func checkSchema(t *testing.T, name, doc string) {
	t.Helper()
	if err := validateDoc(t, name, doc); err != nil {
		t.Errorf("output does not follow %s: %v\n%s", name, err, doc)
	}
}

// validateDoc validates doc against schema/NAME.
func validateDoc(t *testing.T, name, doc string) error {
	t.Helper()
	return schematest.Validate(t, schematest.Compile(t, name), []byte(doc))
}

func TestVerbJSONFollowsSchema(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		args   []string
		code   ExitCode
	}{
		{"tokens", "tokens.v1.json", []string{"tokens", "--server", "$URL", "--json"}, ExitOK},
		{"tokens over budget", "tokens.v1.json", []string{"tokens", "--server", "$URL", "--json", "--budget", "10", "--encoding", "cl100k_base"}, ExitFailure},
		{"docs", "docs.v1.json", []string{"docs", "--server", "$URL", "--json", "--output", "$TMP"}, ExitOK},
		{"docs check stale", "docs.v1.json", []string{"docs", "--server", "$URL", "--json", "--output", "$TMP", "--check", "--format", "html"}, ExitFailure},
		{"retrieval", "retrieval.v1.json", []string{"retrieval", "--server", "$URL", "--json", "--golden", "testdata/golden/mcptest.yaml"}, ExitOK},
		{"retrieval bad golden path", "retrieval.v1.json", []string{"retrieval", "--server", "$URL", "--json", "--golden", "testdata/golden/none.yaml"}, ExitConfig},
		{"score", "score.v1.json", []string{"score", "--server", "$URL", "--json", "--badge", "$TMP/b.svg", "--golden", "testdata/golden/mcptest.yaml"}, ExitOK},
		{"score below minimum", "score.v1.json", []string{"score", "--server", "$URL", "--json", "--min-score", "100"}, ExitFailure},
		{"doctor", "doctor.v1.json", []string{"doctor", "--server", "$URL", "--json"}, ExitOK},
		{"doctor failing", "doctor.v1.json", []string{"doctor", "--server", "http://127.0.0.1:1/mcp", "--json", "--connect-timeout", "2s"}, ExitFailure},
		{"tokens connection error", "tokens.v1.json", []string{"tokens", "--server", "http://127.0.0.1:1/mcp", "--json", "--connect-timeout", "2s"}, ExitConnection},
	}
	// The schemas are not rubber stamps.
	for _, bad := range []struct{ schema, doc string }{
		{"tokens.v1.json", `{"exitCode":0,"bogus":1}`},
		{"replay.v1.json", `{"exitCode":0,"results":[{"id":1,"method":"x","status":"same"}]}`},
		{"tokens.v1.json", `{"exitCode":0,"tools":[{"tool":"x","full":1}]}`},
		{"docs.v1.json", `{"exitCode":1,"check":{"diff":""}}`},
		{"retrieval.v1.json", `{"exitCode":0,"metrics":{"recallAt":{"x":1},"mrr":0,"ndcgAt10":0,"map":0}}`},
		{"retrieval.v1.json", `{"exitCode":0,"metrics":{"recallAt":{"1":1.5},"mrr":0,"ndcgAt10":0,"map":0}}`},
		{"score.v1.json", `{"exitCode":0,"score":101}`},
		{"doctor.v1.json", `{"checks":[{"check":"x","status":"ok","detail":""}],"failed":0,"warnings":0,"exitCode":0}`},
		{"doctor.v1.json", `{"checks":[],"failed":0,"warnings":0,"exitCode":3}`},
		{"score.v1.json", `{"exitCode":0,"checks":[{"id":"x","category":"speed","applies":true,"possible":1,"earned":1,"reason":""}]}`},
	} {
		if validateDoc(t, bad.schema, bad.doc) == nil {
			t.Errorf("%s accepts %s", bad.schema, bad.doc)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runVerb(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, out)
			}
			checkSchema(t, tc.schema, out)
		})
	}
}
