package mock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mcpspec/mcpspec/internal/localguard"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// ServeStdio serves newline-delimited frames from in, answers on out, until in ends (nil) or
// ctx ends. Requests are answered concurrently (each after its recorded latency); ServeStdio
// waits for every answer it started before it returns, except that a read from in cannot be
// interrupted: when ctx ends while the client is silent, that one read is left behind.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex // guards writes to out
	)
	defer wg.Wait()
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = out.Write(append(b, '\n'))
	}
	frames := make(chan transport.Frame)
	readErr := make(chan error, 1)
	go func() {
		r := linestream.NewReader(in, 0)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				readErr <- err
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case f := <-frames:
			if f.Err != nil {
				write(errorFrame(nil, -32700, "mock: parse error: "+f.Err.Error(), nil))
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if a := s.Answer(ctx, f.Data); a != nil {
					write(a)
				}
			}()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maxBody is the largest POST body the HTTP mock reads.
const maxBody = transport.MaxFrameSize

// ServeHTTP serves Streamable HTTP: a POSTed request is answered with a JSON body, a
// notification or response with 202; GET is 405 (the mock sends nothing unasked), DELETE 204.
// A browser's cross-origin request (an Origin that is not loopback) is refused with 403.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !localguard.LoopbackOrigin(o) {
		http.Error(w, "mock: Origin "+o+" is not a loopback address", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "mock: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "mock: cannot read the request body", http.StatusBadRequest)
		return
	}
	a := s.Answer(r.Context(), body)
	if a == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if f, ok := parse(body); ok && f.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", newSessionID())
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a)
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
