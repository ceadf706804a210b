package ui

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/localguard"
)

//go:embed assets
var assets embed.FS

// DefaultAddr is where `mcpspec ui` listens by default.
const DefaultAddr = "127.0.0.1:6274"

// CSP is the Content-Security-Policy of every response: scripts and styles from the page's own
// origin only (no inline script, no eval), no plugins, no <base>, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ExecFunc runs one mcpspec verb in this process, as `mcpspec ARGS…` would, writing to stdout
// and stderr, and returns its exit code. Cancelling ctx interrupts it.
type ExecFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// Options configures a [Server].
type Options struct {
	// Addr is the address to listen on ("" = [DefaultAddr]). A host that is not a loopback
	// address is refused unless AllowRemote.
	Addr string
	// AllowRemote allows a non-loopback Addr. The token is still required; Host is then not
	// checked against the bound address.
	AllowRemote bool
	// Dir is the project directory whose collections the UI lists and whose servers it may
	// start (required).
	Dir string
	// AllowFile, when not "", lists further SPECs the UI may open, one a line.
	AllowFile string
	// Executable is the mcpspec binary, which runs the built-in testserver ("" = os.Executable).
	Executable string
	// TempDir holds the stderr files of the UI's sessions ("" = os.TempDir()).
	TempDir string
	// Exec runs the verbs of runs started from the UI (required for runs).
	Exec ExecFunc
	// ExecStep runs a collection stepped from the UI (`mcpspec test --step` with the UI's
	// stepper); nil: runs cannot be stepped.
	ExecStep StepExecFunc
	// StepWait is how long a stepped run waits at a pause for an answer before it aborts
	// (0 = [DefaultStepWait]).
	StepWait time.Duration
	// History, when set, backs the history page; nil shows "history not available".
	History History
	// Token is the access token ("" = 32 random bytes, hex).
	Token string
	// Log receives the HTTP server's own error lines (nil = discarded).
	Log io.Writer
}

// Server is the web UI. Make one with [New], then [Server.Listen] and [Server.Serve].
type Server struct {
	o       Options
	token   string
	project *project
	events  *broker
	conns   *sessions
	runs    *runs

	// mu guards hosts.
	mu sync.Mutex
	// hosts are the Host header values accepted (the bound address by its loopback names).
	hosts map[string]bool
}

// AddrError is an --addr the UI refuses.
type AddrError struct {
	Addr, Reason string
}

// Error implements error.
func (e *AddrError) Error() string { return fmt.Sprintf("--addr %s: %s", e.Addr, e.Reason) }

// New checks o and scans the project.
func New(o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if err := checkAddr(o.Addr, o.AllowRemote); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	p, err := scanProject(o.Dir, o.AllowFile)
	if err != nil {
		return nil, err
	}
	tok := o.Token
	if tok == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tok = hex.EncodeToString(b)
	}
	ev := newBroker()
	s := &Server{o: o, token: tok, project: p, events: ev, hosts: map[string]bool{}}
	s.conns = newSessions(o, ev)
	s.runs = newRuns(o, p, ev)
	return s, nil
}

// checkAddr refuses an address that does not parse, and one off loopback without allowRemote.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return &AddrError{Addr: addr, Reason: "not HOST:PORT (" + err.Error() + ")"}
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return &AddrError{Addr: addr, Reason: "not a loopback address: the UI starts servers and runs tests for whoever reaches it; pass --allow-remote to listen there anyway (the token is still required)"}
	}
	return nil
}

// Token returns the access token.
func (s *Server) Token() string { return s.token }

// Listen binds the address.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.o.Addr)
	if err != nil {
		return nil, err
	}
	s.bound(ln.Addr())
	return ln, nil
}

// bound records the Host values that reach addr.
func (s *Server) bound(addr net.Addr) {
	_, port, _ := net.SplitHostPort(addr.String())
	host, _, _ := net.SplitHostPort(s.o.Addr)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]", host} {
		if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
			h = "[" + h + "]"
		}
		s.hosts[h+":"+port] = true
	}
}

// URL returns the address of the page on ln, with the token in the fragment (which browsers
// never send to the server, nor in a Referer).
func (s *Server) URL(ln net.Listener) string {
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	host, _, _ := net.SplitHostPort(s.o.Addr)
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() || host == "" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/#token=" + url.QueryEscape(s.token)
}

// Serve serves on ln until ctx ends, then stops the runs, closes the sessions (stopping their
// servers) and returns once every handler has returned or shutdownWait has passed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.bound(ln.Addr())
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(s.o.Log, "mcpspec ui: ", 0),
		BaseContext: func(net.Listener) context.Context { return ctx }}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
	}
	s.events.close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	_ = hs.Shutdown(sctx)
	s.runs.stop()
	s.conns.closeAll()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// shutdownWait bounds how long Serve waits for open requests when it ends.
const shutdownWait = 3 * time.Second

// Handler returns the UI's HTTP handler: the pages, /api/ and /api/events, all behind the
// Host and Origin checks, /api/ behind the token.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("/", files)
	api := http.NewServeMux()
	api.HandleFunc("GET /api/info", s.info)
	api.HandleFunc("GET /api/events", s.events.serve)
	api.HandleFunc("GET /api/sessions", s.conns.list)
	api.HandleFunc("POST /api/sessions", s.connect)
	api.HandleFunc("DELETE /api/sessions/{id}", s.conns.disconnect)
	api.HandleFunc("GET /api/sessions/{id}/process", s.conns.process)
	api.HandleFunc("GET /api/sessions/{id}/frames", s.conns.frames)
	api.HandleFunc("POST /api/sessions/{id}/call", s.conns.call)
	api.HandleFunc("POST /api/sessions/{id}/read", s.conns.read)
	api.HandleFunc("POST /api/sessions/{id}/prompt", s.conns.prompt)
	api.HandleFunc("POST /api/sessions/{id}/complete", s.conns.complete)
	api.HandleFunc("GET /api/sessions/{id}/asks", s.conns.asksOf)
	api.HandleFunc("POST /api/sessions/{id}/asks/{ask}", s.conns.answer)
	api.HandleFunc("GET /api/runs", s.runs.list)
	api.HandleFunc("POST /api/runs", s.runs.start)
	api.HandleFunc("GET /api/runs/{id}", s.runs.get)
	api.HandleFunc("DELETE /api/runs/{id}", s.runs.cancel)
	api.HandleFunc("POST /api/runs/{id}/step", s.runs.step)
	api.HandleFunc("GET /api/recordings", s.listRecordings)
	api.HandleFunc("GET /api/recordings/{name}", s.openRecording)
	api.HandleFunc("GET /api/history/runs", s.historyRuns)
	api.HandleFunc("GET /api/history/trend", s.historyTrend)
	mux.Handle("/api/", s.authorized(api))
	return s.guard(mux)
}

// guard sets the security headers of every response and refuses a foreign Host or Origin.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r.Host) {
			http.Error(w, "forbidden: Host "+r.Host+" is not this UI's address (DNS rebinding?)", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(o, r.Host) {
			http.Error(w, "forbidden: cross-origin request from "+o, http.StatusForbidden)
			return
		}
		if localguard.CrossSite(r) {
			http.Error(w, "forbidden: cross-site request", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed: with --allow-remote any Host; otherwise one of the bound address's names.
func (s *Server) hostAllowed(host string) bool {
	if s.o.AllowRemote {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[strings.ToLower(host)]
}

// originAllowed: the page's own origin, http://HOST.
func (s *Server) originAllowed(origin, host string) bool {
	return localguard.SameOrigin(origin, host) && s.hostAllowed(host)
}

// authorized requires the token: Authorization: Bearer TOKEN, or ?token= on the event stream
// alone (EventSource cannot set headers).
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth == "" && r.URL.Path == "/api/events" {
			auth = "Bearer " + r.URL.Query().Get("token")
		}
		if !localguard.TokenOK(auth, s.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpspec ui"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong token: open the URL mcpspec ui printed (it carries the token)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// infoJSON is GET /api/info.
type infoJSON struct {
	Dir         string          `json:"dir"`
	Servers     []AllowedServer `json:"servers"`
	Collections []Collection    `json:"collections"`
	History     bool            `json:"history"`
	Kinds       []string        `json:"kinds"`
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, infoJSON{Dir: s.project.dir, Servers: s.project.servers,
		Collections: s.project.collections, History: s.o.History != nil, Kinds: runKinds()})
}

// connect opens a session to an allowed server.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string `json:"server"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if !s.project.allowed(req.Server) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("server %q is not in this project's collections nor in the --allow file: add it to a collection or to the allowlist", req.Server))
		return
	}
	s.conns.connect(w, r, req.Server)
}

// maxBody bounds a request body.
const maxBody = 1 << 20

// readJSON decodes a bounded request body into v, answering 400 when it cannot.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		// A form post cannot carry application/json without a CORS preflight.
		writeError(w, http.StatusUnsupportedMediaType, "send application/json")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
