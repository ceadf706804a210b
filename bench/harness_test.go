//go:build unix

package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestHarnessSmoke runs the whole harness with tiny counts so that it cannot rot: every client
// must complete its calls on every transport and every figure must come out.
func TestHarnessSmoke(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Harness(ctx, Config{
		Bin: binary(t), N: 40, Duration: 5 * time.Second, Concurrency: 4,
		InflightStdio: 20, InflightHTTP: 30, InflightH2C: 30,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []Kind{Ours, GoSDK} {
		for i, s := range r.InMemory[kind] {
			if s.Calls != 40 || s.ClientCPUPerCall() <= 0 {
				t.Errorf("in-memory %s run %d: %+v", kind, i, s)
			}
		}
	}
	for _, tr := range []Transport{Stdio, HTTP} {
		for _, kind := range Kinds {
			for i, s := range r.Wire[tr][kind] {
				if s.Calls != 40 || s.CPU <= 0 || s.PerSecond() <= 0 {
					t.Errorf("%s %s run %d: %+v", tr, kind, i, s)
				}
			}
		}
	}
	for _, tr := range []Transport{Stdio, HTTP, H2C} {
		for _, kind := range Kinds {
			// Few calls move the heap by less than its page-granular noise: check only that
			// the measurement ran.
			if s := r.Inflight[tr][kind]; s.Calls == 0 || s.Before.Total() == 0 || s.During.Total() == 0 {
				t.Errorf("in-flight %s %s: %+v", tr, kind, s)
			}
		}
		// HTTP/1.1 holds a connection per pending call; HTTP/2 multiplexes 30 calls on one.
		if want := map[Transport]int{Stdio: 0, HTTP: 30, H2C: 1}[tr]; r.Inflight[tr][Ours].Connections != want {
			t.Errorf("in-flight %s: %d connections opened, want %d", tr, r.Inflight[tr][Ours].Connections, want)
		}
	}
	var out bytes.Buffer
	r.WriteTables(&out)
	for _, want := range []string{"in-memory pipe", "### stdio", "### http", "stdio × 20", "http × 30", "h2c × 30", "| calls/s, 4 callers |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
}

func TestRequestAndResponseIDs(t *testing.T) {
	tests := []struct {
		line string
		req  string
		resp int64
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call"}`, "42", 42, true},
		{`{"id":-7,"jsonrpc":"2.0","result":{}}`, "-7", -7, true},
		{`{"jsonrpc":"2.0","id":"abc","method":"ping"}`, `"abc"`, 0, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":3}}`, "", 0, false},
		{`{"jsonrpc":"2.0","id":"unterminated`, "", 0, false},
	}
	for _, tt := range tests {
		if got := string(requestID([]byte(tt.line))); got != tt.req {
			t.Errorf("requestID(%s) = %q, want %q", tt.line, got, tt.req)
		}
		if got, ok := responseID([]byte(tt.line)); got != tt.resp || ok != tt.ok {
			t.Errorf("responseID(%s) = %d, %v, want %d, %v", tt.line, got, ok, tt.resp, tt.ok)
		}
	}
}

func TestTally(t *testing.T) {
	var tl tally
	reached := tl.arm(3)
	for i := range 3 {
		select {
		case <-reached:
			t.Fatalf("reached after %d of 3", i)
		default:
		}
		tl.add()
	}
	select {
	case <-reached:
	default:
		t.Fatal("not reached after 3 of 3")
	}
	tl.add() // past the target: no second close
}
