package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/mcpspec/mcpspec/internal/serverconn"
	"github.com/mcpspec/mcpspec/session"
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

// prepare validates the server flags and parses the SPEC; it starts nothing. Problems are
// config errors (exit 3).
func (a *app) prepare(f serverFlags, verb string) (*target, error) {
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
	so := &spec.Options{
		Transport:  spec.Transport(f.Transport),
		Header:     header,
		Env:        env,
		StderrPath: f.StderrPath,
		Executable: a.io.Executable,
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
	t.connOpts = serverconn.Options{
		Info: info,
		Dial: dial,
		Session: session.Options{
			ClientInfo:      session.Implementation{Name: "mcpspec", Version: buildVersion()},
			ProtocolVersion: f.ProtocolVersion,
			RequestTimeout:  f.Timeout,
			ConnectTimeout:  f.ConnectTimeout,
			HangThreshold:   f.HangThreshold,
		},
		Terms: serverconn.CLITerms(),
	}
	t.op = serverconn.New(t.connOpts)
	return t, nil
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

// withSession prepares the server described by cmd's flags, opens a session and runs fn with it.
// The session is closed (a child server stopped) before withSession returns, and the temporary
// stderr file is removed unless something failed.
func (a *app) withSession(ctx context.Context, f serverFlags, verb string, fn func(ctx context.Context, t *target, s *session.Session) error) (err error) {
	t, err := a.prepare(f, verb)
	if err != nil {
		return err
	}
	defer func() { t.finish(err != nil) }()
	s, err := t.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(ctx, t, s)
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
}

func newSessionJSON(t *target, s *session.Session) sessionJSON {
	j := sessionJSON{}
	if t != nil {
		j.Transport = t.info.Transport
	}
	if s != nil {
		info := s.ServerInfo()
		j.ProtocolVersion, j.ServerInfo, j.Era = s.ProtocolVersion(), &info, s.Era()
	}
	return j
}
