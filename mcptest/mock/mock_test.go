package mock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest/mock"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

const rec = `{"mcpspecRecording":1,"server":"srv"}
{"t":0,"dir":"c2s","frame":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}
{"t":1,"dir":"s2c","frame":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"rec","version":"1"}}}}
{"t":2,"dir":"c2s","frame":{"jsonrpc":"2.0","method":"notifications/initialized"}}
{"t":3,"dir":"c2s","frame":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}}
{"t":4,"dir":"s2c","frame":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}}
{"t":5,"dir":"c2s","frame":{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}}
{"t":6,"dir":"s2c","frame":{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"b"}]}}}
{"t":7,"dir":"c2s","frame":{"jsonrpc":"2.0","id":3,"method":"tools/list"}}
{"t":60,"dir":"s2c","frame":{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}}
`

func load(t *testing.T) *recording.Recording {
	t.Helper()
	r, err := recording.Read(strings.NewReader(rec), "rec")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func call(id int, text string) string {
	return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
}

func TestAnswer(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		match mock.Match
		in    []string
		want  []string
	}{
		{mock.Exact, []string{call(7, "b"), call(8, "a"), call(9, "b"), call(9, "zz")}, []string{
			`{"id":7,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"b"}]}}`,
			`{"id":8,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a"}]}}`,
			`{"id":9,"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"b"}]}}`,
			`no recorded tools/call has these params; the nearest differs at $.params.arguments.text`,
		}},
		{mock.ByMethod, []string{call(7, "x"), call(8, "y"), call(9, "z"), `{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`}, []string{
			`"text":"a"`, `"text":"b"`, `"text":"b"`,
			`the recording has no prompts/list request (it has initialize, tools/call, tools/list)`,
		}},
		{mock.Sequential, []string{`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, call(7, "x"), call(8, "y"), `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, call(9, "z")}, []string{
			`tools/list out of order: the recording's next request is tools/call`,
			`"text":"a"`, `"text":"b"`, `"tools":[]`,
			`tools/call after the end of the recording`,
		}},
	} {
		t.Run(string(tc.match), func(t *testing.T) {
			m, err := mock.New(load(t), &mock.Options{Match: tc.match})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Answer(ctx, []byte(`{"jsonrpc":"2.0","id":"h","method":"initialize","params":{"whatever":1}}`)); !strings.Contains(string(got), `"id":"h"`) || !strings.Contains(string(got), `"serverInfo"`) {
				t.Errorf("initialize = %s", got)
			}
			if got := m.Answer(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); got != nil {
				t.Errorf("a notification was answered: %s", got)
			}
			for i, in := range tc.in {
				got := string(m.Answer(ctx, []byte(in)))
				if !strings.Contains(got, tc.want[i]) {
					t.Errorf("answer to %s = %s, want it to contain %s", in, got, tc.want[i])
				}
			}
		})
	}
}

func TestUnknownMode(t *testing.T) {
	if _, err := mock.New(load(t), &mock.Options{Match: "fuzzy"}); err == nil {
		t.Error("New accepted match mode fuzzy")
	}
}

func TestLatencyRecorded(t *testing.T) {
	m, err := mock.New(load(t), &mock.Options{Latency: true})
	if err != nil {
		t.Fatal(err)
	}
	// tools/list took 53 ms in the recording: the answer waits at least that long (a lower
	// bound only: a loaded machine may take longer).
	start := time.Now()
	m.Answer(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if d := time.Since(start); d < 53*time.Millisecond {
		t.Errorf("answer came after %v, before the recorded 53ms", d)
	}
	// A cancelled context cuts the wait short and still answers.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := m.Answer(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); !strings.Contains(string(got), `"tools":[]`) {
		t.Errorf("answer = %s", got)
	}
}

func TestServeStdio(t *testing.T) {
	m, err := mock.New(load(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- m.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	go func() {
		io.WriteString(inW, call(5, "a")+"\nnot json\n")
		inW.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	if len(lines) != 2 || !strings.Contains(all, `"id":5`) || !strings.Contains(all, "-32700") {
		t.Errorf("stdio answers:\n%s", all)
	}
}

// TestServeHTTPWithClient opens a real client session on the HTTP mock.
func TestServeHTTPWithClient(t *testing.T) {
	m, err := mock.New(load(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := session.Open(ctx, streamable.Dialer{URL: srv.URL}, nil) // era detection included
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Text string }
	if json.Unmarshal(res.Content[0], &c) != nil || c.Text != "b" {
		t.Errorf("echo b through the mock = %s", res.Content[0])
	}
	_, err = s.CallTool(ctx, "echo", map[string]any{"text": "nope"}, nil)
	if err == nil || !strings.Contains(err.Error(), "nearest differs at $.params.arguments.text") {
		t.Errorf("unmatched call error = %v", err)
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification: HTTP %d, want 202", resp.StatusCode)
	}
}
