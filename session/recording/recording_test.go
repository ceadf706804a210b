package recording_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session/recording"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec", "one.jsonl")
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cr3t-token", "***") }
	w, err := recording.Create(path, recording.Header{Mcpspec: "v1", Server: "srv --token s3cr3t-token", Transport: "stdio"},
		&recording.WriterOptions{Mask: mask, MaxFrame: 100})
	if err != nil {
		t.Fatal(err)
	}
	frames := []struct {
		dir   recording.Direction
		frame string
		meta  *recording.HTTP
	}{
		{recording.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"k":"s3cr3t-token"}}`, nil},
		{recording.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{}}}`, &recording.HTTP{SessionID: "abc", Status: 200}},
		{recording.ServerToClient, `not json`, nil},
		{recording.ClientToServer, `{"jsonrpc":"2.0","method":"x","params":{"pad":"` + strings.Repeat("x", 100) + `"}}`, nil},
	}
	for _, f := range frames {
		if err := w.Write(f.dir, []byte(f.frame), f.meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "s3cr3t") {
		t.Errorf("secret in recording:\n%s", raw)
	}
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.ProtocolVersion != "2025-06-18" || rec.Header.Server != "srv --token ***" || rec.Header.Format != recording.Version {
		t.Errorf("header = %+v", rec.Header)
	}
	var got []string
	for _, e := range rec.Entries {
		got = append(got, string(e.Dir)+" "+string(e.Frame)+e.Text)
	}
	want := []string{
		`c2s {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"k":"***"}}`,
		`s2c {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{}}}`,
		`s2c not json`,
		`c2s ` + frames[3].frame[:100],
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if e := rec.Entries[3]; !e.Truncated || e.Size != len(frames[3].frame) {
		t.Errorf("last entry truncated=%v size=%d, want true %d", e.Truncated, e.Size, len(frames[3].frame))
	}
	if m := rec.Entries[1].HTTP; m == nil || m.SessionID != "abc" || m.Status != 200 {
		t.Errorf("http = %+v", m)
	}
	for i := 1; i < len(rec.Entries); i++ {
		if rec.Entries[i].Offset < rec.Entries[i-1].Offset {
			t.Errorf("offsets go back: %v", rec.Entries)
		}
	}
	if _, err := recording.Create(path, recording.Header{}, nil); !errors.Is(err, recording.ErrExists) {
		t.Errorf("second Create = %v, want ErrExists", err)
	}
}

func TestReadErrors(t *testing.T) {
	head := `{"mcpspecRecording":1,"started":"2026-01-01T00:00:00Z"}` + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "r.jsonl:1: empty file: not an mcpspec recording"},
		{"no header", `{"t":1,"dir":"c2s","frame":{}}`, "r.jsonl:1: not an mcpspec recording"},
		{"newer", `{"mcpspecRecording":9}`, "r.jsonl:1: recording format 9"},
		{"bad json", head + "\n{", "r.jsonl:3: bad frame line"},
		{"bad dir", head + `{"t":1,"dir":"up","frame":{}}`, `r.jsonl:2: bad frame line: dir "up"`},
		{"unknown field", head + `{"t":1,"dir":"c2s","frame":{},"x":1}`, "r.jsonl:2: bad frame line: json: unknown field"},
		{"nothing", head + `{"t":1,"dir":"c2s"}`, "r.jsonl:2: bad frame line: no frame and no text"},
		{"negative", head + `{"t":-1,"dir":"c2s","frame":{}}`, "r.jsonl:2: bad frame line: offset -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recording.Read(strings.NewReader(tc.in), "r.jsonl")
			var le *recording.LineError
			if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Read = %v, want a LineError starting %q", err, tc.want)
			}
		})
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat(" ", 2048)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := recording.ReadFile(path, 1024); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ReadFile over the cap = %v, want a size error", err)
	}
}

func TestProtocolVersionFromFrames(t *testing.T) {
	in := `{"mcpspecRecording":1}
{"t":0,"dir":"s2c","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","serverInfo":{"name":"s"}}}}`
	rec, err := recording.Read(strings.NewReader(in), "r")
	if err != nil {
		t.Fatal(err)
	}
	if v := rec.ProtocolVersion(); v != "2025-03-26" {
		t.Errorf("ProtocolVersion = %q", v)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"mcpspecRecording":1,"server":"x"}
{"t":0.5,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"ping"}}
{"t":1,"dir":"s2c","text":"oops","truncated":true,"size":9,"http":{"status":200}}`)
	f.Add(`{"mcpspecRecording":1}` + "\n\n" + `{"t":1e308,"dir":"s2c","frame":null}`)
	f.Add("{")
	f.Fuzz(func(t *testing.T, in string) {
		rec, err := recording.Read(strings.NewReader(in), "f")
		if err != nil {
			var le *recording.LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, e := range rec.Entries {
			if e.Dir != recording.ClientToServer && e.Dir != recording.ServerToClient {
				t.Fatalf("entry with dir %q", e.Dir)
			}
		}
		_ = rec.ProtocolVersion()
		_ = rec.Duration()
	})
}

func TestFrameVersion(t *testing.T) {
	for _, tc := range []struct {
		dir   recording.Direction
		frame string
		want  string
	}{
		{recording.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{}}}`, "2025-06-18"},
		{recording.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`, ""},
		{recording.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "2026-07-28"},
		{recording.ClientToServer, `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, ""},
		{recording.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, ""},
	} {
		if got := recording.FrameVersion(tc.dir, []byte(tc.frame)); got != tc.want {
			t.Errorf("FrameVersion(%s, %s) = %q, want %q", tc.dir, tc.frame, got, tc.want)
		}
	}
}

func TestIDKeyWithID(t *testing.T) {
	for in, want := range map[string]string{`1`: `1`, `"a"`: `"a"`, ` 7 `: `7`, `null`: ``, ``: ``, `{`: ``} {
		if got := recording.IDKey([]byte(in)); got != want {
			t.Errorf("IDKey(%q) = %q, want %q", in, got, want)
		}
	}
	if got := string(recording.WithID([]byte(`{"jsonrpc":"2.0","id":1,"result":{"b":2,"a":1}}`), []byte(`"x"`))); got != `{"id":"x","jsonrpc":"2.0","result":{"b":2,"a":1}}` {
		t.Errorf("WithID = %s", got)
	}
	if got := string(recording.WithID([]byte(`[1]`), []byte(`2`))); got != `[1]` {
		t.Errorf("WithID of an array = %s", got)
	}
}
