package cli

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Defaults of the flags shared by every verb that talks to a server.
const (
	defaultTimeout        = 30 * time.Second
	defaultConnectTimeout = 10 * time.Second
)

// serverFlags are the values of the flags every server-facing verb accepts.
type serverFlags struct {
	Server          string
	Transport       string
	Timeout         time.Duration
	ConnectTimeout  time.Duration
	ProtocolVersion string
	Header          []string
	// Env is --server-env (and the deprecated --env K=V, which sets oldEnv).
	Env           []string
	oldEnv        bool
	JSON          bool
	HangThreshold time.Duration
	StderrPath    string
	// MaxMessageSize is --max-message-size as given; validate parses it into maxMessage.
	MaxMessageSize string
	maxMessage     int
	// noHangFlag is set when the verb shows no --hang-threshold (the detectors have their own
	// hang detector): a timeout's hint must not suggest it.
	noHangFlag bool
}

// serverFlagDefs returns the flags of a server-facing verb. --server is checked by the verb, not
// by the parser, so that --explain works without it.
func serverFlagDefs() []cli.Flag {
	return []cli.Flag{
		// One server: a second --server is refused, never silently dropped (load takes several).
		&cli.StringFlag{Name: "server", Aliases: []string{"s"}, OnlyOnce: true, Usage: "the server to test, a `SPEC`: a command line, testserver (the built-in one), or an http(s)://, ws(s)://, tcp:// address"},
		&cli.StringFlag{Name: "transport", Usage: "force a transport: stdio, http, sse, ws or tcp (default: from the SPEC)"},
		&durationFlag{Name: "timeout", Value: defaultTimeout, Usage: "deadline of each request"},
		&durationFlag{Name: "connect-timeout", Value: defaultConnectTimeout, Usage: "deadline for starting or connecting to the server and the handshake"},
		&cli.StringFlag{Name: "protocol-version", Usage: "pin the MCP protocol `VERSION` (default: detect the era and negotiate the newest)"},
		&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Usage: "HTTP/WebSocket header `K=V` (repeatable)"},
		&cli.StringSliceFlag{Name: "server-env", Usage: "environment variable `K=V` for a server started as a command (repeatable)"},
		// The old name of --server-env, renamed so that --env means a collection's environment
		// everywhere (test --env NAME); it still works, with a warning.
		&cli.StringSliceFlag{Name: "env", Aliases: []string{"e"}, Hidden: true, Usage: "deprecated: use --server-env `K=V`"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON on stdout"},
		&durationFlag{Name: "hang-threshold", DefaultText: "off", Usage: "turn on the hang detector: a request unanswered (and without progress) for `D` is a Hang, or a Deadlock if no answer comes in the grace period (2×D)"},
		&cli.StringFlag{Name: "stderr", Usage: "save the stderr of a server started as a command to `FILE` (default: a temporary file, kept when an error names it)"},
		maxMessageSizeFlag(),
	}
}

// maxMessageSizeFlag is --max-message-size, the largest message accepted from a server.
func maxMessageSizeFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-message-size", Value: "16MiB", Usage: "largest message accepted from the server, on every transport: bytes or a `SIZE` with a unit (64MiB, 512KiB)"}
}

// parseMaxMessageSize reads --max-message-size; a problem is a config error.
func parseMaxMessageSize(s string) (int, error) {
	n, err := collection.ParseMessageSize(s)
	if err != nil {
		return 0, &Error{Code: ExitConfig, Msg: "--max-message-size " + err.Error(), Hint: "e.g. --max-message-size 64MiB (between 1KiB and 1GiB)"}
	}
	return n, nil
}

// explainFlag is --explain, which prints what a verb does instead of doing it.
func explainFlag() cli.Flag {
	return &cli.BoolFlag{Name: "explain", Usage: "print what this command does, step by step, and exit"}
}

func readServerFlags(cmd *cli.Command) serverFlags {
	return serverFlags{
		Server:          cmd.String("server"),
		Transport:       cmd.String("transport"),
		Timeout:         cmd.Duration("timeout"),
		ConnectTimeout:  cmd.Duration("connect-timeout"),
		ProtocolVersion: cmd.String("protocol-version"),
		Header:          cmd.StringSlice("header"),
		Env:             append(cmd.StringSlice("server-env"), cmd.StringSlice("env")...),
		oldEnv:          cmd.IsSet("env"),
		JSON:            cmd.Bool("json"),
		HangThreshold:   cmd.Duration("hang-threshold"),
		StderrPath:      cmd.String("stderr"),
		MaxMessageSize:  cmd.String("max-message-size"),
		noHangFlag:      !showsFlag(cmd, "hang-threshold"),
	}
}

// showsFlag reports whether cmd has a flag called name that its help shows.
func showsFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			vf, ok := f.(cli.VisibleFlag)
			return !ok || vf.IsVisible()
		}
	}
	return false
}

// validate checks what the parser cannot; every problem is a config error with a hint.
func (f *serverFlags) validate(verb string) error {
	if strings.TrimSpace(f.Server) == "" {
		return &Error{Code: ExitConfig, Msg: "missing --server",
			Hint: fmt.Sprintf("say which server to test, e.g. mcpspec %s --server \"python -m my_server\" (a command), --server http://127.0.0.1:8080/mcp, or --server testserver (the built-in one)", verb)}
	}
	if f.Timeout <= 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--timeout must be positive, got %s", f.Timeout), Hint: "e.g. --timeout 30s"}
	}
	if f.ConnectTimeout <= 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--connect-timeout must be positive, got %s", f.ConnectTimeout), Hint: "e.g. --connect-timeout 10s"}
	}
	if f.HangThreshold < 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--hang-threshold must not be negative, got %s", f.HangThreshold), Hint: "e.g. --hang-threshold 5s"}
	}
	if v := f.ProtocolVersion; v != "" && !slices.Contains(session.SupportedVersions(), v) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --protocol-version %q", v),
			Hint: "use one of: " + strings.Join(session.SupportedVersions(), ", ")}
	}
	if t := f.Transport; t != "" && !slices.Contains(spec.Transports(), spec.Transport(t)) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --transport %q", t), Hint: "use one of: stdio, http, sse, ws, tcp"}
	}
	if f.MaxMessageSize != "" {
		n, err := parseMaxMessageSize(f.MaxMessageSize)
		if err != nil {
			return err
		}
		f.maxMessage = n
	}
	return nil
}

// parseHeaders turns K=V (or "K: V") entries into a header.
func parseHeaders(entries []string) (http.Header, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, e := range entries {
		i := strings.IndexAny(e, "=:")
		if i <= 0 {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--header %q is not K=V", redactEntry(e)), Hint: "write it as --header 'Authorization=Bearer TOKEN' or --header 'Authorization: Bearer TOKEN'"}
		}
		k, v := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
		if strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--header %q has a blank in its name or a line break", redactEntry(e)), Hint: "header names are single tokens, e.g. X-Api-Key=…"}
		}
		h.Add(k, v)
	}
	return h, nil
}

// parseEnv checks K=V entries for a stdio server's environment.
func parseEnv(entries []string) ([]string, error) {
	for _, e := range entries {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--server-env %q is not K=V", redactEntry(e)), Hint: "write it as --server-env API_KEY=secret"}
		}
	}
	return entries, nil
}

// redactEntry shows a malformed K=V entry without what may be its secret value: the first word
// (or the part before = or :) stays, the rest becomes ***.
func redactEntry(e string) string {
	i := strings.IndexAny(e, "=: \t\r\n")
	if i < 0 {
		return e
	}
	return e[:i] + string(e[i]) + "***"
}

// durationFlag is a duration flag read by the one rule durations follow everywhere, flags and
// collections alike: a Go duration (30s, 500ms, 1m30s), or a bare whole number of milliseconds.
type durationFlag = cli.FlagBase[time.Duration, cli.NoConfig, msDuration]

// msDuration is the value of a [durationFlag].
type msDuration time.Duration

// Create satisfies cli.ValueCreator.
func (d msDuration) Create(val time.Duration, p *time.Duration, _ cli.NoConfig) cli.Value {
	*p = val
	return (*msDuration)(p)
}

// ToString satisfies cli.ValueCreator.
func (d msDuration) ToString(val time.Duration) string { return val.String() }

// Set parses a Go duration or a bare number of milliseconds.
func (d *msDuration) Set(s string) error {
	v, err := collection.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = msDuration(v)
	return nil
}

// Get returns the duration.
func (d *msDuration) Get() any { return time.Duration(*d) }

// String renders the duration.
func (d *msDuration) String() string { return time.Duration(*d).String() }
