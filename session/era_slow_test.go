package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

// These tests cover era detection against servers too slow to answer server/discover within
// the probe window: the session then sends initialize as well and keeps whichever request
// decides the era first.

// slowStart holds every answer until initialize arrives, which proves the client waited out
// the probe window, then answers the held frames in arrival order (discover first) with answer.
// The handler runs on the fake's loop goroutine only.
func slowStart(answer func(f *fake, m msg)) func(f *fake, m msg) {
	var held []msg
	started := false
	return func(f *fake, m msg) {
		if started {
			answer(f, m)
			return
		}
		held = append(held, m)
		if m.Method != "initialize" {
			return
		}
		started = true
		for _, h := range held {
			answer(f, h)
		}
	}
}

// statelessOnly answers discover and rejects initialize as a 2026-07-28-only server does.
func statelessOnly(f *fake, m msg) {
	f.stateless = true
	if m.Method == "initialize" {
		f.errorReply(m, -32601, "method not found")
		return
	}
	f.defaults(m)
}

// dualEra answers discover with the stateless version and initialize too.
func dualEra(f *fake, m msg) {
	f.stateless = true
	f.defaults(m)
}

// legacyOnly answers discover with -32601 and initialize with a result.
func legacyOnly(f *fake, m msg) { f.defaults(m) }

func TestEraDetectionSlowServer(t *testing.T) {
	handshakeLegacy := []string{"server/discover", "initialize", "notifications/initialized"}
	cases := []struct {
		name    string
		handle  func(f *fake, m msg)
		era     Era
		version string
		methods []string // handshake methods the server saw, in order
		resets  int      // ResetSession calls (a stray legacy session dropped)
	}{
		{
			name:    "stateless-only server, slow start, rejects initialize",
			handle:  slowStart(statelessOnly),
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover", "initialize"},
			resets:  1,
		},
		{
			name:    "dual-era server, slow start, answers discover first",
			handle:  slowStart(dualEra),
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover", "initialize"},
			resets:  1,
		},
		{
			name:    "legacy server, slow start, rejects discover",
			handle:  slowStart(legacyOnly),
			era:     EraLegacy,
			version: Version20251125,
			methods: handshakeLegacy,
		},
		{
			name: "legacy server that never answers discover",
			handle: func(f *fake, m msg) {
				if m.Method != "server/discover" {
					f.defaults(m)
				}
			},
			era:     EraLegacy,
			version: Version20251125,
			methods: handshakeLegacy,
		},
		{
			name: "legacy server answering discover after the handshake",
			handle: func() func(f *fake, m msg) {
				var discover *msg
				return func(f *fake, m msg) {
					switch m.Method {
					case "server/discover":
						discover = &m
					case "notifications/initialized":
						f.errorReply(*discover, -32601, "method not found")
					default:
						f.defaults(m)
					}
				}
			}(),
			era:     EraLegacy,
			version: Version20251125,
			methods: handshakeLegacy,
		},
		{
			// Answered in either order, a server of both eras gets the newer one: the
			// stateless era, whose discover was sent first.
			name: "dual-era server answering initialize before discover",
			handle: func() func(f *fake, m msg) {
				var discover *msg
				return func(f *fake, m msg) {
					f.stateless = true
					switch m.Method {
					case "server/discover":
						discover = &m
					case "initialize":
						f.defaults(m)
						f.defaults(*discover)
					default:
						f.defaults(m)
					}
				}
			}(),
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover", "initialize"},
			resets:  1, // the legacy session initialize opened is dropped
		},
		{
			// Discover answered 60ms after initialize (a busy machine): still within the grace
			// discover gets (as long again as initialize took, at least 100ms).
			name: "dual-era server answering discover soon after initialize",
			handle: func() func(f *fake, m msg) {
				var discover *msg
				return func(f *fake, m msg) {
					f.stateless = true
					switch m.Method {
					case "server/discover":
						discover = &m
					case "initialize":
						f.defaults(m)
						d := *discover
						time.AfterFunc(60*time.Millisecond, func() { f.defaults(d) })
					default:
						f.defaults(m)
					}
				}
			}(),
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover", "initialize"},
			resets:  1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newFake(t, tc.handle)
			s := open(t, d, &Options{ConnectTimeout: 3 * time.Second, probe: 50 * time.Millisecond})
			checkHandshake(t, s, f, tc.era, tc.version, tc.methods)
			if fs := s.Findings(); len(fs) != 0 {
				t.Errorf("findings from the handshake's late answers: %+v", fs)
			}
			if got := f.end.Resets(); got != tc.resets {
				t.Errorf("%d session resets, want %d", got, tc.resets)
			}
			meta := metaOf(t, f.received("tools/call")[0])
			if (meta != nil) != (tc.era == EraStateless) {
				t.Errorf("%s era request _meta = %v", tc.era, meta)
			}
		})
	}
}

// A stateless-only server that never answers discover fails the handshake at ConnectTimeout
// with initialize's rejection, not earlier.
func TestEraDetectionSilentStatelessServer(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method == "initialize" {
			f.errorReply(m, -32601, "method not found")
		}
	})
	const connect = 400 * time.Millisecond
	start := time.Now()
	_, err := Open(context.Background(), d, &Options{ConnectTimeout: connect, probe: 50 * time.Millisecond})
	var e *Error
	if !errors.As(err, &e) || e.Method != "initialize" || e.Code != -32601 {
		t.Fatalf("Open: %v, want initialize's -32601", err)
	}
	if el := time.Since(start); el < connect-50*time.Millisecond {
		t.Errorf("gave up after %v, before the discover's deadline %v", el, connect)
	}
}
