package loadgen

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// barrierServer is the reference server behind a front that holds every tools/call until want
// of them are in the server at once (or until hold passes) and records the most it saw.
type barrierServer struct {
	URL string

	mu      sync.Mutex // guards in and max
	in, max int
	want    int
	release chan struct{}
}

func newBarrierServer(t *testing.T, want int, hold time.Duration) *barrierServer {
	srv := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy})
	t.Cleanup(srv.Close)
	target, _ := url.Parse(srv.URL)
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host}) },
		Transport: &http.Transport{MaxIdleConnsPerHost: want},
	}
	b := &barrierServer{want: want, release: make(chan struct{})}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			b.mu.Lock()
			b.in++
			b.max = max(b.max, b.in)
			if b.in == b.want {
				close(b.release)
			}
			b.mu.Unlock()
			select {
			case <-b.release:
			case <-time.After(hold):
			case <-r.Context().Done():
			}
			defer func() { b.mu.Lock(); b.in--; b.mu.Unlock() }()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	b.URL = front.URL + target.Path
	return b
}

// The load engine sizes a Streamable HTTP session's connection pool for its requests in
// flight: 100 closed-model workers on one session put 100 tools/calls in the server at once,
// not the 64 of the transport's default pool (the rest waiting in the client for a connection).
func TestHTTPPoolHoldsEveryRequestInFlight(t *testing.T) {
	const workers = 100
	b := newBarrierServer(t, workers, 20*time.Second)
	o := serverconn.Options{
		Info:    spec.Info{Spec: b.URL, Transport: spec.HTTP},
		Dial:    func(string) (transport.Dialer, error) { return streamable.Dialer{URL: b.URL}, nil },
		Session: session.Options{ProtocolVersion: "2025-11-25", ConnectTimeout: 5 * time.Second, RequestTimeout: 30 * time.Second},
	}
	r := runCfg(t, &Config{Server: o, Concurrency: workers, Iterations: workers, Workload: echoWorkload()}).Run
	if r.Errors.Total != 0 || r.Throughput.TotalRequests != workers {
		t.Errorf("requests %d, errors %+v", r.Throughput.TotalRequests, r.Errors)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max != workers {
		t.Errorf("the server saw at most %d tools/calls at once, want %d", b.max, workers)
	}
}

func TestInFlightBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"closed", Config{Concurrency: 100, Duration: time.Second}, 100},
		{"open", Config{Rate: 50, MaxInFlight: 300, Duration: time.Second}, 300},
		{"open default", Config{Rate: 50, Duration: time.Second}, DefaultMaxInFlight},
		{"closed spike", Config{Scenario: Spike, Concurrency: 10, Duration: 6 * time.Second, Spike: SpikeConfig{Peak: 250}}, 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Server = serverconn.Options{Info: spec.Info{Spec: "x", Transport: spec.Stdio}, Dial: func(string) (transport.Dialer, error) { return nil, nil }}
			tc.cfg.Workload = echoWorkload()
			rc, err := tc.cfg.resolve()
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlan(rc)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.inFlightBound(); got != tc.want {
				t.Errorf("inFlightBound = %d, want %d", got, tc.want)
			}
		})
	}
}

// sizedServer gives a Streamable HTTP dialer a pool for n requests and leaves other dialers
// and a caller's own client alone.
func TestSizedServer(t *testing.T) {
	own := &http.Client{}
	for _, tc := range []struct {
		name string
		d    transport.Dialer
		want transport.Dialer
	}{
		{"http", streamable.Dialer{URL: "u"}, streamable.Dialer{URL: "u", Connections: 500}},
		{"auto", streamable.Auto{Dialer: streamable.Dialer{URL: "u"}}, streamable.Auto{Dialer: streamable.Dialer{URL: "u", Connections: 500}}},
		{"own client", streamable.Dialer{URL: "u", Client: own}, streamable.Dialer{URL: "u", Client: own}},
		{"larger already", streamable.Dialer{URL: "u", Connections: 900}, streamable.Dialer{URL: "u", Connections: 900}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := sizedServer(serverconn.Options{Dial: func(string) (transport.Dialer, error) { return tc.d, nil }}, 500)
			got, err := o.Dial("")
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}
