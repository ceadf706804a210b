package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startUI serves a UI on a free loopback port until the test ends; it returns the base URL.
func startUI(t *testing.T, o Options) (*Server, string) {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return within 10s of its context ending")
		}
	})
	base, _, _ := strings.Cut(s.URL(ln), "/#")
	return s, base
}

type req struct {
	method, path, body string
	header             map[string]string
}

func do(t *testing.T, base string, r req) *http.Response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.header {
		if k == "Host" {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	res, err := http.DefaultClient.Do(hr.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAuth checks the token, Host, Origin and fetch-site rules and the security headers.
func TestAuth(t *testing.T) {
	s, base := startUI(t, Options{})
	tok := s.Token()
	bearer := "Bearer " + tok
	host := strings.TrimPrefix(base, "http://")
	tests := []struct {
		name string
		req  req
		want int
	}{
		{"page without token", req{method: "GET", path: "/"}, 200},
		{"script without token", req{method: "GET", path: "/app.js"}, 200},
		{"api without token", req{method: "GET", path: "/api/info"}, 401},
		{"api with a wrong token", req{method: "GET", path: "/api/info", header: map[string]string{"Authorization": "Bearer nope"}}, 401},
		{"api with the token in the query", req{method: "GET", path: "/api/info?token=" + tok}, 401},
		{"api with the token", req{method: "GET", path: "/api/info", header: map[string]string{"Authorization": bearer}}, 200},
		{"events without token", req{method: "GET", path: "/api/events"}, 401},
		{"connect without token", req{method: "POST", path: "/api/sessions", body: `{"server":"testserver"}`, header: map[string]string{"Content-Type": "application/json"}}, 401},
		{"run without token", req{method: "POST", path: "/api/runs", body: `{"kind":"probe","server":"testserver"}`, header: map[string]string{"Content-Type": "application/json"}}, 401},
		{"foreign Host on the page", req{method: "GET", path: "/", header: map[string]string{"Host": "evil.example"}}, 403},
		{"foreign Host with the token", req{method: "GET", path: "/api/info", header: map[string]string{"Host": "evil.example:" + strings.Split(host, ":")[1], "Authorization": bearer}}, 403},
		{"foreign Origin with the token", req{method: "GET", path: "/api/info", header: map[string]string{"Origin": "http://evil.example", "Authorization": bearer}}, 403},
		{"https Origin of the same host", req{method: "GET", path: "/api/info", header: map[string]string{"Origin": "https://" + host, "Authorization": bearer}}, 403},
		{"null Origin", req{method: "GET", path: "/api/info", header: map[string]string{"Origin": "null", "Authorization": bearer}}, 403},
		{"own Origin", req{method: "GET", path: "/api/info", header: map[string]string{"Origin": base, "Authorization": bearer}}, 200},
		{"localhost Host", req{method: "GET", path: "/api/info", header: map[string]string{"Host": "localhost:" + strings.Split(host, ":")[1], "Authorization": bearer}}, 200},
		{"cross-site fetch", req{method: "GET", path: "/api/info", header: map[string]string{"Sec-Fetch-Site": "cross-site", "Authorization": bearer}}, 403},
		{"form post (not JSON)", req{method: "POST", path: "/api/sessions", body: `server=testserver`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": bearer}}, 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := do(t, base, tt.req)
			defer res.Body.Close()
			if res.StatusCode != tt.want {
				b, _ := io.ReadAll(res.Body)
				t.Errorf("status %d, want %d (%s)", res.StatusCode, tt.want, b)
			}
			for h, want := range map[string]string{"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
				if got := res.Header.Get(h); got != want {
					t.Errorf("%s: %q, want %q", h, got, want)
				}
			}
		})
	}
	if !strings.Contains(CSP, "script-src 'self';") || strings.Contains(CSP, "unsafe") {
		t.Errorf("CSP %q allows inline script or eval", CSP)
	}
}

// TestEventsTokenInQuery checks that the event stream takes the token as ?token= (EventSource
// cannot send headers) and replays what a reconnecting page missed.
func TestEventsTokenInQuery(t *testing.T) {
	s, base := startUI(t, Options{})
	s.events.publish("session", map[string]string{"id": "s1"})
	s.events.publish("session", map[string]string{"id": "s2"})
	res := do(t, base, req{method: "GET", path: "/api/events?token=" + s.Token() + "&last=1"})
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	var got []string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			got = append(got, d)
			break
		}
	}
	if len(got) != 1 || got[0] != `{"id":"s2"}` {
		t.Errorf("replayed %q, want only the event after id 1", got)
	}
}

// TestAddr checks that a non-loopback --addr is refused without --allow-remote.
func TestAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:6274", false, true},
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
		{"127.0.0.2:0", false, true},
		{"0.0.0.0:6274", false, false},
		{":6274", false, false},
		{"192.168.1.10:6274", false, false},
		{"example.com:80", false, false},
		{"no-port", false, false},
		{"0.0.0.0:6274", true, true},
	}
	for _, tt := range tests {
		_, err := New(Options{Addr: tt.addr, AllowRemote: tt.remote, Dir: t.TempDir()})
		var ae *AddrError
		if tt.ok != (err == nil) || (err != nil && !errors.As(err, &ae)) {
			t.Errorf("New(%q, allowRemote %v) = %v, want ok %v", tt.addr, tt.remote, err, tt.ok)
		}
	}
}

// TestAllowed checks the collections the UI lists and that it starts only the servers
// internal/localguard allows.
func TestAllowed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "schemaVersion: \"1.0\"\nname: A\nserver:\n  command: python3\n  args: [\"-m\", \"my server\"]\ntests:\n  - name: t1\n    call: x\n")
	write("sub/b.yaml", "schemaVersion: \"1.0\"\nname: B\nservers:\n  web:\n    url: http://127.0.0.1:9/mcp\ntests:\n  - name: t2\n    call: x\n")
	write("node_modules/c.yaml", "schemaVersion: \"1.0\"\nserver: {command: hidden}\ntests: [{name: t, call: x}]\n")
	write("other.yaml", "just: yaml\n")
	write("allow.txt", "# servers I trust\nnpx -y @modelcontextprotocol/server-everything\n\n")
	p, err := scanProject(dir, filepath.Join(dir, "allow.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range p.collections {
		paths = append(paths, c.Path)
	}
	if strings.Join(paths, ",") != "a.yaml,sub/b.yaml" {
		t.Errorf("collections %v, want a.yaml and sub/b.yaml", paths)
	}
	// The rules themselves are tested in internal/localguard; here, that the UI uses them.
	for spec, want := range map[string]bool{
		"testserver --hostile-html":                      true,
		"python3 -m 'my server'":                         true,
		"npx -y @modelcontextprotocol/server-everything": true,
		"hidden":                   false,
		"sh -c 'touch /tmp/pwned'": false,
	} {
		if got := p.allowed(spec); got != want {
			t.Errorf("allowed(%q) = %v, want %v", spec, got, want)
		}
	}
	if _, err := scanProject(dir, filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("a missing --allow file was accepted")
	}
}

// TestConnectRefused checks that the API refuses to start a server that is not allowed, and
// that runs refuse collections and servers outside the project.
func TestConnectRefused(t *testing.T) {
	s, base := startUI(t, Options{Exec: func(context.Context, []string, io.Writer, io.Writer) int { return 0 }})
	h := map[string]string{"Authorization": "Bearer " + s.Token(), "Content-Type": "application/json"}
	for _, r := range []req{
		{method: "POST", path: "/api/sessions", body: `{"server":"sh -c 'touch pwned'"}`, header: h},
		{method: "POST", path: "/api/runs", body: `{"kind":"probe","server":"sh -c 'touch pwned'"}`, header: h},
		{method: "POST", path: "/api/runs", body: `{"kind":"test","collection":"../../etc/x.yaml"}`, header: h},
		{method: "POST", path: "/api/runs", body: `{"kind":"rm","server":"testserver"}`, header: h},
		{method: "POST", path: "/api/runs", body: `{"kind":"load","server":"testserver","tool":"echo","duration":"2h"}`, header: h},
	} {
		res := do(t, base, r)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 403 && res.StatusCode != 400 {
			t.Errorf("%s %s: status %d (%s), want 403 or 400", r.path, r.body, res.StatusCode, b)
		}
	}
}

// TestRunStreams checks a run's plumbing with a stand-in for the CLI: the verb's arguments, TAP
// lines as test events, --progress json lines as progress events, the exit code and the result.
func TestRunStreams(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("schemaVersion: \"1.0\"\nserver: testserver\ntests:\n  - name: one\n    call: echo\n    with: {text: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var calls [][]string
	exec := func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		mu.Lock()
		calls = append(calls, args)
		mu.Unlock()
		switch args[0] {
		case "test":
			io.WriteString(stdout, "TAP version 14\nok 1 - C › one\nnot ok 2 - C › two\n")
			for i, a := range args {
				if p, ok := strings.CutPrefix(a, "json="); ok && args[i-1] == "--reporter" {
					os.WriteFile(p, []byte(`{"collections":[]}`), 0o644)
				}
			}
			return 1
		case "load":
			io.WriteString(stderr, `{"elapsedMs":500,"requests":10,"errors":0,"rps":20,"p50Ms":1,"p99Ms":2,"inFlight":0}`+"\nsomething else\n")
			io.WriteString(stdout, `{"passed": true}`)
		}
		return 0
	}
	s, base := startUI(t, Options{Dir: dir, Exec: exec})
	h := map[string]string{"Authorization": "Bearer " + s.Token(), "Content-Type": "application/json"}
	events := do(t, base, req{method: "GET", path: "/api/events?token=" + s.Token()})
	defer events.Body.Close()
	sc := bufio.NewScanner(events.Body)
	next := func(typ string) string {
		t.Helper()
		seen := ""
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				seen = e
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && seen == typ {
				return d
			}
		}
		t.Fatalf("stream ended before a %s event: %v", typ, sc.Err())
		return ""
	}
	start := func(body string) runJSON {
		t.Helper()
		res := do(t, base, req{method: "POST", path: "/api/runs", body: body, header: h})
		defer res.Body.Close()
		var r runJSON
		if err := json.NewDecoder(res.Body).Decode(&r); err != nil || res.StatusCode != 202 {
			t.Fatalf("POST /api/runs %s: %d %v", body, res.StatusCode, err)
		}
		return r
	}
	r := start(`{"kind":"test","collection":"c.yaml","test":"one"}`)
	if d := next("run.test"); !strings.Contains(d, `"name":"C › one"`) || !strings.Contains(d, `"ok":true`) {
		t.Errorf("first run.test %s", d)
	}
	if d := next("run.test"); !strings.Contains(d, `"ok":false`) {
		t.Errorf("second run.test %s", d)
	}
	if d := next("run.done"); !strings.Contains(d, `"exitCode":1`) {
		t.Errorf("run.done %s", d)
	}
	res := do(t, base, req{method: "GET", path: "/api/runs/" + r.ID, header: h})
	var got runJSON
	json.NewDecoder(res.Body).Decode(&got)
	res.Body.Close()
	if !got.Done || got.ExitCode != 1 || len(got.Tests) != 2 || string(got.Result) != `{"collections":[]}` {
		t.Errorf("run %+v", got)
	}
	start(`{"kind":"load","server":"testserver","tool":"echo","args":"{\"text\":\"x\"}","rate":"50","duration":"2s"}`)
	if d := next("run.progress"); !strings.Contains(d, `"rps":20`) {
		t.Errorf("run.progress %s", d)
	}
	if d := next("run.log"); !strings.Contains(d, "something else") {
		t.Errorf("run.log %s", d)
	}
	next("run.done")
	mu.Lock()
	defer mu.Unlock()
	wantTest := []string{"test", filepath.Join(dir, "c.yaml"), "--reporter", "tap"}
	if len(calls) != 2 || strings.Join(calls[0][:4], " ") != strings.Join(wantTest, " ") || !strings.Contains(strings.Join(calls[0], " "), "--grep ^one$") {
		t.Errorf("test verb called as %q", calls)
	}
	if l := strings.Join(calls[1], " "); !strings.Contains(l, "load --rate 50 --duration 2s --progress json --json") || !strings.Contains(l, "--server testserver --tool echo") {
		t.Errorf("load verb called as %q", l)
	}
}
