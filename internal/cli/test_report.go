package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// reporterSpec is one --reporter NAME[=PATH].
type reporterSpec struct {
	name, path string
	// stream is what the reporter streams as the run goes (0: nothing).
	stream reporters.StreamKind
}

// parseReporters reads --reporter NAME[=PATH] values. Console on stdout is added when no
// reporter writes to stdout (none given, or all to files).
func parseReporters(entries []string) ([]reporterSpec, error) {
	if len(entries) == 0 {
		return []reporterSpec{consoleSpec()}, nil
	}
	var out []reporterSpec
	stdout := 0
	for _, e := range entries {
		name, path, _ := strings.Cut(e, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		rep, err := reporters.New(name, nil)
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %q: unknown reporter", e),
				Hint: "use one of: " + strings.Join(reporters.Names(), ", ") + " (NAME or NAME=PATH)", Err: err}
		}
		hasPath := strings.Contains(e, "=")
		path = strings.TrimSpace(path)
		switch {
		case hasPath && path == "":
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %q names no file after the = sign", e),
				Hint: fmt.Sprintf("write --reporter %s=out/report%s for a file, or --reporter %s alone for stdout", name, reporters.Extension(name), name)}
		case path == "":
			stdout++
		}
		for _, prev := range out {
			if path != "" && prev.path != "" && filepath.Clean(prev.path) == filepath.Clean(path) {
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %s=%s and --reporter %s=%s write the same file", prev.name, prev.path, name, path),
					Hint: "give each reporter a file of its own, e.g. --reporter junit=out/junit.xml --reporter json=out/results.json"}
			}
		}
		out = append(out, reporterSpec{name: name, path: path, stream: streamKind(rep)})
	}
	if stdout > 1 {
		return nil, &Error{Code: ExitConfig, Msg: "more than one --reporter writes to stdout",
			Hint: "give every reporter but one a file: --reporter junit=out/junit.xml"}
	}
	if stdout == 0 {
		// Every report goes to a file: the terminal still gets the console's progress and digest.
		out = append(out, consoleSpec())
	}
	return out, nil
}

// consoleSpec is the console reporter on stdout, the default.
func consoleSpec() reporterSpec {
	return reporterSpec{name: "console", stream: streamKind(reporters.NewConsole(nil))}
}

// streamKind is what rep streams as the run goes; 0 when it does not stream.
func streamKind(rep reporters.Reporter) reporters.StreamKind {
	if s, ok := rep.(reporters.Streamer); ok {
		return s.Streams()
	}
	return 0
}

// openReporter is one reporter and where its output goes.
type openReporter struct {
	spec   reporterSpec
	rep    reporters.Reporter
	w      io.Writer      // masked: masked for a file, the app's masked stdout otherwise
	file   *os.File       // nil for stdout
	masked *redact.Writer // over file; nil for stdout
}

// openReporters builds the reporters and opens their files (creating parent directories), so a
// streaming reporter can write as the run goes.
func (a *app) openReporters(specs []reporterSpec) ([]*openReporter, error) {
	tty := false
	if f, ok := a.term.Stdout.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	var out []*openReporter
	for _, s := range specs {
		o := &openReporter{spec: s, w: a.io.Stdout}
		if s.path != "" {
			if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
				closeReporters(out)
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot write the %s report: cannot create the directory of %s: %v", s.name, s.path, serverconn.Innermost(err)),
					Hint: "give --reporter " + s.name + "=PATH a path whose directories can be created, e.g. " + s.name + "=out/report", Err: err}
			}
			f, err := os.Create(s.path)
			if err != nil {
				closeReporters(out)
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot write the %s report to %s: %v", s.name, s.path, serverconn.Innermost(err)),
					Hint: "check that " + s.path + " is a writable file path, or pick another in --reporter " + s.name + "=PATH", Err: err}
			}
			o.file = f
			o.masked = redact.NewWriter(f, a.masker)
			o.w = o.masked
		}
		ropts := &reporters.Options{}
		switch s.stream {
		case reporters.StreamsProgress:
			if s.path == "" {
				ropts.Live = a.io.Stdout
				ropts.TTY = tty
				ropts.Color = tty && os.Getenv("NO_COLOR") == ""
			}
		case reporters.StreamsReport:
			ropts.Live = o.w
		}
		rep, err := reporters.New(s.name, ropts)
		if err != nil {
			closeReporters(append(out, o))
			return nil, &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
		}
		o.rep = rep
		out = append(out, o)
	}
	return out, nil
}

// writeReports renders run with every reporter and closes their files; it returns what failed.
func writeReports(reps []*openReporter, run *result.Run) []error {
	var problems []error
	for _, r := range reps {
		if err := r.rep.Report(r.w, run); err != nil {
			problems = append(problems, fmt.Errorf("write the %s report: %w", r.spec.name, err))
		}
		if r.masked != nil {
			if err := r.masked.Flush(); err != nil {
				problems = append(problems, fmt.Errorf("write %s: %w", r.spec.path, err))
			}
		}
		if r.file != nil {
			if err := r.file.Close(); err != nil {
				problems = append(problems, fmt.Errorf("write %s: %w", r.spec.path, err))
			}
			r.file = nil
		}
	}
	return problems
}

func closeReporters(rs []*openReporter) {
	for _, r := range rs {
		if r.file != nil {
			_ = r.file.Close()
		}
	}
}
