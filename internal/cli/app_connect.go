package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// target is a server ready to be dialed: the parsed SPEC, its opener and where its stderr goes.
type target struct {
	flags serverFlags
	info  spec.Info
	op    *serverconn.Opener
	// connOpts are the options op was built from (the probe builds openers of its own).
	connOpts serverconn.Options
	// conn is the session opened by open, for describing its failures.
	conn *serverconn.Conn
	// tempDir holds the default stderr file; removed by finish unless something failed.
	tempDir string
}

// prepareHook lets a verb adjust the SPEC options (working directory, environment) before the
// SPEC is parsed, and the session options (declared client capabilities).
type prepareHook struct {
	spec    func(*spec.Options)
	session func(*session.Options)
	// dial wraps the dialer the SPEC became (record start records its frames).
	dial func(transport.Dialer) transport.Dialer
}

// prepare validates the server flags and parses the SPEC; it starts nothing. Problems are
// config errors (exit 3). hooks, when given, adjust the options first.
func (a *app) prepare(f serverFlags, verb string, hooks ...prepareHook) (*target, error) {
	if err := f.validate(verb); err != nil {
		return nil, err
	}
	header, err := parseHeaders(f.Header)
	if err != nil {
		return nil, err
	}
	env, err := parseEnv(f.Env)
	if err != nil {
		return nil, err
	}
	if f.oldEnv {
		fmt.Fprintln(a.io.Stderr, "warning: --env K=V is now --server-env K=V; --env will be removed (on test and validate, --env NAME selects a collection's environment)")
	}
	so := &spec.Options{
		Transport:      spec.Transport(f.Transport),
		Header:         header,
		Env:            env,
		StderrPath:     f.StderrPath,
		Executable:     a.io.Executable,
		MaxMessageSize: f.maxMessage,
		Abort:          a.io.Abort,
	}
	for _, h := range hooks {
		if h.spec != nil {
			h.spec(so)
		}
	}
	info, err := spec.Resolve(f.Server, so)
	if err != nil {
		return nil, specError(err)
	}
	t := &target{flags: f}
	if info.Transport == spec.Stdio && f.StderrPath == "" {
		// Keep the server's stderr in a file the error hints can point to.
		dir, err := os.MkdirTemp(a.io.TempDir, "mcpspec-")
		if err != nil {
			return nil, &Error{Code: ExitRuntime, Msg: "cannot create a temporary directory for the server's stderr", Hint: "pass --stderr FILE to choose where it goes", Err: err}
		}
		t.tempDir = dir
		so.StderrPath = filepath.Join(dir, "server.stderr.log")
	}
	dial, info, err := serverconn.SpecDial(f.Server, so)
	if err != nil {
		t.finish(false)
		return nil, specError(err)
	}
	t.info = info
	for _, h := range hooks {
		if wrap := h.dial; wrap != nil {
			inner := dial
			dial = func(stderrPath string) (transport.Dialer, error) {
				d, err := inner(stderrPath)
				if err != nil {
					return nil, err
				}
				return wrap(d), nil
			}
		}
	}
	sopts := session.Options{
		ClientInfo:      session.Implementation{Name: "mcpspec", Version: buildVersion()},
		ProtocolVersion: f.ProtocolVersion,
		RequestTimeout:  f.Timeout,
		ConnectTimeout:  f.ConnectTimeout,
		HangThreshold:   f.HangThreshold,
	}
	for _, h := range hooks {
		if h.session != nil {
			h.session(&sopts)
		}
	}
	terms := serverconn.CLITerms()
	if f.noHangFlag {
		terms.HangThreshold = "" // a hint names only flags the verb has
	}
	t.connOpts = serverconn.Options{
		Info:    info,
		Dial:    dial,
		Session: sopts,
		Terms:   terms,
	}
	t.op = serverconn.New(t.connOpts)
	return t, nil
}

// serverFlags reads the server flags of cmd and registers what they carry of secrets, so every
// line the verb prints masks them, --explain's included: header and env values named like a
// key, token, secret, password or auth, the password and secret-looking query parameters of a
// URL, and secret-looking flags of a command line — as collections register theirs.
func (a *app) serverFlags(cmd *cli.Command) serverFlags {
	f := readServerFlags(cmd)
	for _, e := range f.Header {
		if i := strings.IndexAny(e, "=:"); i > 0 {
			a.masker.AddHeader(strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:]))
		}
	}
	for _, e := range f.Env {
		k, v, _ := strings.Cut(e, "=")
		a.masker.AddNamed(k, v)
	}
	a.masker.AddURL(f.Server)
	a.masker.AddArgs(strings.Fields(f.Server))
	return f
}

// open starts or connects to the server and performs the handshake. A failure is described as
// a connection error (exit 4) unless it was an interruption.
func (t *target) open(ctx context.Context) (*session.Session, error) {
	c, err := t.op.Open(ctx)
	if err != nil {
		return nil, t.connectError(ctx, err)
	}
	t.conn = c
	return c.Session, nil
}

// finish removes the temporary stderr file, unless failed: then the hints point at it and it
// must stay.
func (t *target) finish(failed bool) {
	if t.tempDir != "" && !failed {
		_ = os.RemoveAll(t.tempDir)
	}
}

// names reports whether err's message or hint points at the temporary stderr file, which must
// then stay; a failure that does not name it (a tool's isError) leaves nothing behind.
func (t *target) names(err error) bool {
	if err == nil || t.tempDir == "" {
		return false
	}
	text := err.Error() + "\n" + hint.Of(err)
	var e *Error
	if errors.As(err, &e) {
		text += "\n" + e.Hint
	}
	return strings.Contains(text, t.tempDir)
}

// withSession prepares the server described by cmd's flags, opens a session and runs fn with it.
// The session is closed (a child server stopped) before withSession returns, and the temporary
// stderr file is removed unless something failed. What the server sent that answered no
// request is printed on stderr as a warning (inspect prints it as it goes); a server that still
// answers gets a ping first, so a second answer to the last request is not lost.
func (a *app) withSession(ctx context.Context, f serverFlags, verb string, fn func(ctx context.Context, t *target, s *session.Session) error, hooks ...prepareHook) (err error) {
	t, err := a.prepare(f, verb, hooks...)
	if err != nil {
		return err
	}
	defer func() { t.finish(t.names(err)) }()
	s, err := t.open(ctx)
	if err != nil {
		return err
	}
	err = fn(ctx, t, s)
	t.conn.Settle(ctx, err)
	_ = s.Close()
	printFindings(a.io.Stderr, t.conn.Findings.Take())
	return err
}

// findings returns every finding of the target's session so far (none before it opened).
func (t *target) findings() []session.Finding {
	if t == nil || t.conn == nil {
		return nil
	}
	return t.conn.Findings.All()
}

// failureJSON is the part of a verb's JSON output that describes a failure.
type failureJSON struct {
	Category session.Category `json:"category,omitempty"`
	Code     int              `json:"code,omitempty"`
	Message  string           `json:"message"`
	Hint     string           `json:"hint,omitempty"`
}

// newFailureJSON describes err for JSON output.
func newFailureJSON(err error) *failureJSON {
	f := &failureJSON{Message: err.Error(), Category: session.CategoryOf(err)}
	var ce *Error
	if errors.As(err, &ce) {
		f.Hint = ce.Hint
		if ce.Category != "" {
			f.Category = ce.Category
		}
	}
	var se *session.Error
	if errors.As(err, &se) {
		f.Code = se.Code
	}
	return f
}

// sessionJSON is what every server-facing verb's JSON output says about the session.
type sessionJSON struct {
	ProtocolVersion string                  `json:"protocolVersion,omitempty"`
	ServerInfo      *session.Implementation `json:"serverInfo,omitempty"`
	Era             session.Era             `json:"era,omitempty"`
	Transport       spec.Transport          `json:"transport,omitempty"`
	// Findings are what the server sent that answered no request, once the session closed.
	Findings []findingJSON `json:"findings,omitempty"`
}

func newSessionJSON(t *target, s *session.Session) sessionJSON {
	j := sessionJSON{}
	if t != nil {
		j.Transport = t.info.Transport
		if t.conn != nil {
			j.Transport = t.conn.Transport // what an http(s) URL settled on
		}
	}
	if s != nil {
		info := s.ServerInfo()
		j.ProtocolVersion, j.ServerInfo, j.Era = s.ProtocolVersion(), &info, s.Era()
	}
	return j
}
