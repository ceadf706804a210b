package runner

import (
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// DialOptions tunes [DialServer].
type DialOptions struct {
	// Executable runs the built-in reference server ("" = os.Executable()).
	Executable string
	// StderrPath receives a child process's stderr ("" = keep only a tail in memory).
	StderrPath string
	// BaseDir resolves a relative `cwd:` (the collection's directory).
	BaseDir string
	// MaxMessageSize is the message size limit of a server that sets no maxMessageSize
	// (0 = [transport.MaxFrameSize]).
	MaxMessageSize int
	// Abort, when closed, makes a stdio server's Close kill its process tree at once.
	Abort <-chan struct{}
}

// DialServer turns a collection server (variables already expanded) into a dialer through the
// same SPEC resolution `--server` uses (package spec): a command line for stdio, "testserver
// [flags]" for the built-in server, a URL for the network transports.
func DialServer(srv *collection.Server, o *DialOptions) (transport.Dialer, spec.Info, error) {
	if o == nil {
		o = &DialOptions{}
	}
	s, so := ServerSpec(srv)
	so.Executable = o.Executable
	so.StderrPath = o.StderrPath
	so.Abort = o.Abort
	so.MaxMessageSize = o.MaxMessageSize
	if srv.MaxMessageSize > 0 {
		so.MaxMessageSize = srv.MaxMessageSize
	}
	if so.Dir != "" && !filepath.IsAbs(so.Dir) && o.BaseDir != "" {
		so.Dir = filepath.Join(o.BaseDir, so.Dir)
	}
	d, info, err := spec.Parse(s, so)
	if err != nil {
		return nil, info, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	return d, info, nil
}

// ServerSpec returns the SPEC string and spec options that reach srv (no executable or stderr
// path set). The SPEC is what results show as the server's target.
func ServerSpec(srv *collection.Server) (string, *spec.Options) {
	so := &spec.Options{Dir: srv.Cwd, ShutdownGrace: srv.Timeouts.Shutdown}
	if len(srv.Headers) > 0 {
		so.Header = http.Header{}
		for k, v := range srv.Headers {
			so.Header.Set(k, v)
		}
	}
	if len(srv.Env) > 0 {
		for _, k := range slices.Sorted(maps.Keys(srv.Env)) {
			so.Env = append(so.Env, k+"="+srv.Env[k])
		}
	}
	switch srv.Transport {
	case collection.TransportTestServer:
		return strings.TrimSpace(spec.BuiltinName + " " + spec.Join(srv.Args)), so
	case collection.TransportStdio:
		so.Transport = spec.Stdio
		return spec.Join(append([]string{srv.Command}, srv.Args...)), so
	case collection.TransportSSE:
		so.Transport = spec.SSE
		return srv.URL, so
	case collection.TransportTCP:
		so.Transport = spec.TCP
		if !strings.Contains(srv.URL, "://") {
			return "tcp://" + srv.URL, so
		}
		return srv.URL, so
	case collection.TransportWS:
		so.Transport = spec.WS
		return srv.URL, so
	}
	// Streamable HTTP, falling back to HTTP+SSE for servers of the 2024-11-05 era.
	return srv.URL, so
}

// expandServer returns a copy of srv with the variables of its strings substituted.
func expandServer(srv *collection.Server, vars *collection.Vars) (*collection.Server, error) {
	out := *srv
	var err error
	exp := func(s string) string {
		if err != nil {
			return s
		}
		var v string
		v, err = vars.ExpandString(s)
		return v
	}
	out.Command = exp(srv.Command)
	out.URL = exp(srv.URL)
	out.Cwd = exp(srv.Cwd)
	if srv.Args != nil {
		out.Args = make([]string, len(srv.Args))
		for i, a := range srv.Args {
			out.Args[i] = exp(a)
		}
	}
	if srv.Env != nil {
		out.Env = make(map[string]string, len(srv.Env))
		for k, v := range srv.Env {
			out.Env[k] = exp(v)
		}
	}
	if srv.Headers != nil {
		out.Headers = make(map[string]string, len(srv.Headers))
		for k, v := range srv.Headers {
			out.Headers[k] = exp(v)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", srv.Name, err)
	}
	collection.RegisterServerSecrets(vars.Masker(), &out)
	return &out, nil
}
