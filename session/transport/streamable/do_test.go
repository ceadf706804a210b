package streamable

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/session/transport"
)

// TestRedirectedPOST: a POST sent straight to the Transport that the server redirects is
// followed as net/http's Client follows it: 307 and 308 re-send the POST with its body and
// headers to the new location, 302 and 303 turn it into a GET, and a 3xx without a Location
// is the answer.
func TestRedirectedPOST(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`
	tests := []struct {
		status int
		// want is the method and path of every request the server saw.
		want []string
		// answered says the call is answered; otherwise Send fails with the final status.
		answered bool
	}{
		{http.StatusTemporaryRedirect, []string{"POST /mcp", "POST /mcp", "POST /mcp/"}, true},
		{http.StatusPermanentRedirect, []string{"POST /mcp", "POST /mcp", "POST /mcp/"}, true},
		{http.StatusFound, []string{"POST /mcp", "POST /mcp", "GET /mcp/"}, false},
		{http.StatusSeeOther, []string{"POST /mcp", "POST /mcp", "GET /mcp/"}, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				switch {
				case r.URL.Path == "/mcp":
					http.Redirect(w, r, "/mcp/", tt.status)
				case r.Method == http.MethodPost:
					result(w, s.RPC.ID, `{"ok":true}`)
				default:
					http.Error(w, "no stream", http.StatusMethodNotAllowed)
				}
			})
			c := dial(t, Dialer{URL: srv.URL + "/mcp", Header: http.Header{"X-Token": {"t"}}})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := c.Send(ctx, []byte(req))
			if tt.answered {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				if f := recv(t, c); !strings.Contains(string(f.Data), `"ok":true`) {
					t.Errorf("answer %s", f.Data)
				}
			} else if se := statusErr(t, err); se.Status != http.StatusMethodNotAllowed {
				t.Errorf("status %d, want 405", se.Status)
			}
			var got []string
			for _, r := range srv.requests() {
				got = append(got, r.Method+" "+r.Path)
				if r.Method == http.MethodPost && (string(r.Body) != req || r.Header.Get("X-Token") != "t" || r.Header.Get("Mcp-Method") != "tools/call") {
					t.Errorf("%s lost its body or headers: %q %v", r.Method, r.Body, r.Header)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
		})
	}

	t.Run("no Location", func(t *testing.T) {
		srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
			w.WriteHeader(http.StatusTemporaryRedirect)
		})
		c := dial(t, Dialer{URL: srv.URL})
		if se := statusErr(t, c.Send(context.Background(), []byte(req))); se.Status != http.StatusTemporaryRedirect {
			t.Errorf("status %d, want 307", se.Status)
		}
		if n := len(srv.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// TestDirectPOSTError: a POST sent straight to the Transport fails with the error Client.Do
// would have returned (a *url.Error naming the operation and the URL).
func TestDirectPOSTError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial is refused
	u := "http://" + addr + "/mcp"
	c := dial(t, Dialer{URL: u})
	err = c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	var ue *url.Error
	if !errors.As(err, &ue) || ue.Op != "Post" || ue.URL != u {
		t.Fatalf("Send: %v (%T), want a *url.Error for Post %s", err, errors.Unwrap(err), u)
	}
	if errors.Is(err, transport.ErrClosed) {
		t.Errorf("Send: %v is ErrClosed", err)
	}
}

// TestClientWithJar: a client with a cookie jar gets its requests through the Client, which
// sends the cookies the server set.
func TestClientWithJar(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, s seen) {
		http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "node-3"})
		result(w, s.RPC.ID, `{}`)
	})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := NewClient(2)
	client.Jar = jar
	c := dial(t, Dialer{URL: srv.URL, Client: client})
	send(t, c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	recv(t, c)
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	recv(t, c)
	var got []string
	for _, r := range srv.find(http.MethodPost) {
		got = append(got, r.Header.Get("Cookie"))
	}
	if d := cmp.Diff([]string{"", "affinity=node-3"}, got); d != "" {
		t.Errorf("Cookie headers (-want +got):\n%s", d)
	}
}

// TestCrossOriginRedirectRefused: a server that answers 307 with a Location on another port
// (another origin) does not get our Authorization, custom headers or body sent there, and the
// other server's answer is not credited to it: the call fails with ErrCrossOriginRedirect. A
// redirect within the origin is still followed (TestRedirectedPOST).
func TestCrossOriginRedirectRefused(t *testing.T) {
	const req = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`
	for _, tt := range []struct {
		name   string
		status int
	}{
		{"307", http.StatusTemporaryRedirect},
		{"308", http.StatusPermanentRedirect},
		{"302", http.StatusFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// other is the attacker's collector on another port.
			other := newServer(t, func(w http.ResponseWriter, _ *http.Request, s seen) {
				result(w, s.RPC.ID, `{"collected":true}`)
			})
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
				http.Redirect(w, r, other.URL+"/collect", tt.status)
			})
			c := dial(t, Dialer{URL: srv.URL + "/mcp",
				Header: http.Header{"Authorization": {"Bearer sk-live-secret"}, "X-Api-Key": {"k-secret"}}})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := c.Send(ctx, []byte(req))
			if !errors.Is(err, transport.ErrCrossOriginRedirect) {
				t.Errorf("Send: %v, want ErrCrossOriginRedirect", err)
			}
			if got := other.requests(); len(got) != 0 {
				t.Errorf("the other origin received %d requests, first %s %s with %v and body %q",
					len(got), got[0].Method, got[0].Path, got[0].Header, got[0].Body)
			}
		})
	}
}

// TestSameOrigin: the origin is scheme, host and port, with the scheme's default port.
func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp/", true},
		{"http://example.com/mcp", "http://EXAMPLE.com:80/x", true},
		{"https://example.com/mcp", "https://example.com:443/x", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://example.com/mcp", "https://example.com/mcp", false},
		{"http://example.com/mcp", "http://evil.example.com/mcp", false},
	} {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := transport.SameOrigin(a, b); got != tt.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
