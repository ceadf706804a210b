package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// explainServer describes how a verb reaches the server, in numbered steps starting at n.
func explainServer(b *strings.Builder, f serverFlags, n int) int {
	step := func(format string, args ...any) {
		fmt.Fprintf(b, "  %d. ", n)
		fmt.Fprintf(b, format, args...)
		b.WriteString("\n")
		n++
	}
	info, err := spec.Resolve(f.Server, &spec.Options{Transport: spec.Transport(f.Transport), StderrPath: f.StderrPath})
	stderr := "a temporary file, kept if anything fails"
	if f.StderrPath != "" {
		stderr = f.StderrPath
	}
	switch {
	case strings.TrimSpace(f.Server) == "":
		step("Read --server SPEC (not given yet): a command line, testserver, or an http(s)://, ws(s)://, tcp:// address.")
	case err != nil:
		step("Read --server %q: %v.", f.Server, err)
	case info.Builtin:
		step("Start the built-in reference server as a child process (%s) and speak MCP over its stdin/stdout; its stderr goes to %s.", spec.Join(info.Argv[1:]), stderr)
	case info.Transport == spec.Stdio:
		step("Start %s as a child process and speak MCP over its stdin/stdout (one JSON-RPC message per line); its stderr goes to %s.", spec.Join(info.Argv), stderr)
	case info.Transport == spec.Auto:
		step("Connect to %s with Streamable HTTP (POST per message); if the server does not speak it, fall back to the legacy HTTP+SSE transport.", info.URL)
	default:
		step("Connect to %s.", info)
	}
	era := "detect the protocol era and negotiate the newest version both sides speak"
	if f.ProtocolVersion != "" {
		era = "use protocol version " + f.ProtocolVersion + " (pinned by --protocol-version)"
	}
	step("Handshake: %s. Starting, connecting and the handshake must finish within --connect-timeout %s; any failure there is a connection error (exit 4).", era, f.ConnectTimeout)
	return n
}

// explainRequests describes the deadlines every request gets.
func explainRequests(f serverFlags) string {
	s := fmt.Sprintf("Each request must be answered within --timeout %s (else Timeout, exit 5).", f.Timeout)
	if f.HangThreshold > 0 {
		s += fmt.Sprintf(" The hang detector is on: no answer after %s marks the request hung; an answer within the grace period (%s more) fails it as Hang, none as Deadlock (exit 5).", f.HangThreshold, 2*f.HangThreshold)
	} else {
		s += " Add --hang-threshold D to tell a slow answer (Hang) from none at all (Deadlock)."
	}
	return s
}

func explainCall(w io.Writer, f serverFlags, tool, args string) error {
	var b strings.Builder
	b.WriteString("mcpspec call sends one tools/call to one server and prints the result.\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	if tool == "" {
		tool = "TOOL"
	}
	if args == "" {
		args = "{} (no --args)"
	}
	fmt.Fprintf(&b, "  %d. Read the arguments from --args %s; they must be a JSON object (bad input: exit 3).\n", n, args)
	fmt.Fprintf(&b, "  %d. Send tools/call {name: %q, arguments}. %s\n", n+1, tool, explainRequests(f))
	fmt.Fprintf(&b, "  %d. Print the result: text content as is, other content summarized, structuredContent as indented JSON.\n", n+2)
	fmt.Fprintf(&b, "     With --json: one JSON object with protocolVersion, serverInfo, era, latencyMs, result, exitCode and, on failure, category, code, message, hint.\n")
	fmt.Fprintf(&b, "  %d. Close the session; a child server gets its stdin closed, then SIGTERM, then SIGKILL (its whole process tree).\n", n+3)
	b.WriteString("\nExit codes: 0 success · 1 the tool answered isError · 2 JSON-RPC error or malformed answer · 3 bad input ·\n")
	b.WriteString("4 cannot start, connect or handshake; crash or disconnect · 5 timeout, hang or deadlock · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func explainInspect(w io.Writer, f serverFlags) error {
	var b strings.Builder
	b.WriteString("mcpspec inspect opens one session and reads commands, one per line, until .exit or end of input.\n\nSteps:\n")
	n := explainServer(&b, f, 1)
	fmt.Fprintf(&b, "  %d. Read a line (with editing and history when stdin is a terminal) and run it:\n", n)
	width := 0
	for _, c := range replCommands() {
		width = max(width, len(c.usage))
	}
	for _, c := range replCommands() {
		fmt.Fprintf(&b, "       %-*s %s\n", width, c.usage, c.help)
	}
	fmt.Fprintf(&b, "     %s\n", explainRequests(f))
	b.WriteString("     A failed command prints its error and the next line is read; the session stays open.\n")
	fmt.Fprintf(&b, "  %d. On .exit, end of input or Ctrl-D, close the session (a child server is stopped) and exit 0.\n", n+1)
	b.WriteString("\nExit codes: 0 after .exit · 3 bad flags · 4 cannot start, connect or handshake · 130 interrupted.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
