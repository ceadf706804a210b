package loadgen

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// Abandoned-session mode opens a Streamable HTTP session per iteration and never DELETEs it;
// the per-iteration mode closes each one with DELETE.
func TestAbandonedSessionsAreNotDeleted(t *testing.T) {
	srv := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy})
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	var deletes atomic.Int64
	// The proxy sets Host to the backend's, as a real one does: the reference server refuses
	// a Host that names another port (DNS-rebinding defence).
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
	}}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	opts := func(keep bool) serverconn.Options {
		return serverconn.Options{
			Info: spec.Info{Spec: front.URL, Transport: spec.HTTP},
			Dial: func(string) (transport.Dialer, error) {
				return streamable.Dialer{URL: front.URL + target.Path, KeepSession: keep}, nil
			},
			Session: session.Options{ProtocolVersion: "2025-11-25", ConnectTimeout: 5 * time.Second},
		}
	}
	r := runCfg(t, &Config{Server: opts(true), Abandon: true, Concurrency: 2, Iterations: 8, Workload: echoWorkload()}).Run
	if r.Sessions.Abandoned != 8 || r.Sessions.Opened != 9 {
		t.Errorf("sessions %+v", r.Sessions)
	}
	if n := deletes.Load(); n != 0 {
		t.Errorf("%d sessions were DELETEd in abandoned mode", n)
	}
	if r.Throughput.TotalRequests < 16 { // a session opening and a call per iteration
		t.Errorf("requests %d", r.Throughput.TotalRequests)
	}
	runCfg(t, &Config{Server: opts(false), SessionMode: PerIteration, Concurrency: 2, Iterations: 8, Workload: echoWorkload()})
	if n := deletes.Load(); n != 9 {
		t.Errorf("%d DELETEs for 9 closed sessions", n)
	}
}
