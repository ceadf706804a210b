package streamable

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkRoundTripJSON measures Send+Recv of one request answered as application/json, with
// 32 concurrent callers on one Conn and one reader routing answers by id, as the session does.
func BenchmarkRoundTripJSON(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"ok"}]}}`))
	}))
	defer srv.Close()
	c, err := Dialer{URL: srv.URL}.Dial(context.Background())
	if err != nil {
		b.Fatal(err)
	}

	var mu sync.Mutex // guards pending
	pending := map[string]chan struct{}{}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			f, err := c.Recv()
			if err != nil {
				return
			}
			var env struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(f.Data, &env)
			mu.Lock()
			ch := pending[string(env.ID)]
			delete(pending, string(env.ID))
			mu.Unlock()
			if ch != nil {
				ch <- struct{}{}
			}
		}
	}()

	var next atomic.Int64
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		done := make(chan struct{}, 1)
		ctx := context.Background()
		for pb.Next() {
			id := strconv.FormatInt(next.Add(1), 10)
			mu.Lock()
			pending[id] = done
			mu.Unlock()
			frame := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
			if err := c.Send(ctx, frame); err != nil {
				b.Error(err)
				return
			}
			<-done
		}
	})
	b.StopTimer()
	c.Close()
	<-readerDone
}
