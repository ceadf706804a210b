package mcptest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// TCPServer serves newline-delimited JSON-RPC over TCP, one session per connection.
type TCPServer struct {
	// Addr is the listening address, host:port.
	Addr string
	// Backend is the server's state; use it for [Backend.Stats].
	Backend *Backend

	l      net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and one goroutine per connection

	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}
	once  sync.Once
}

// NewTCPServer starts a TCP server on 127.0.0.1 at a free port. It panics when it cannot
// listen or opts is invalid, as [net/http/httptest.NewServer] does.
func NewTCPServer(opts *Options) *TCPServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("mcptest: listen: %v", err))
	}
	s, err := StartTCPServer(l, opts)
	if err != nil {
		panic(err)
	}
	return s
}

// StartTCPServer serves on an existing listener, which the server then owns.
func StartTCPServer(l net.Listener, opts *Options) (*TCPServer, error) {
	b, err := newBackend(opts)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	s := &TCPServer{Addr: l.Addr().String(), Backend: b, l: l, conns: make(map[net.Conn]struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// URL is the server's address as tcp://host:port.
func (s *TCPServer) URL() string { return "tcp://" + s.Addr }

// Stats returns the Backend's counters.
func (s *TCPServer) Stats() Stats { return s.Backend.Stats() }

func (s *TCPServer) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.l.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.Backend.log.Warn("tcp accept", "err", err)
			}
			return
		}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(nc)
	}
}

func (s *TCPServer) serve(nc net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
	}()
	var once sync.Once
	closeFn := func(abrupt bool) {
		once.Do(func() {
			if tc, ok := nc.(*net.TCPConn); ok && abrupt {
				_ = tc.SetLinger(0) // a crash resets the connection rather than closing it politely
			}
			_ = nc.Close()
		})
	}
	err := s.Backend.serveFrames(s.ctx, newLineReader(nc), s.Backend.newFrameWriter(nc), closeFn, readerWait)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.Backend.log.Debug("tcp connection ended", "err", err)
	}
}

// Close stops listening, ends every connection and every hung call, and waits for all of the
// server's goroutines.
func (s *TCPServer) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.cancel()
		s.mu.Unlock()
		s.Backend.Close()
		_ = s.l.Close()
		s.wg.Wait()
	})
}
