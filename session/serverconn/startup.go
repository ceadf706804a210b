package serverconn

import (
	"regexp"
	"strings"
)

// missingRE finds, in what a server wrote to stderr before it exited, the line saying that
// something it needs to start is missing: a Node module or package, a Python module or script,
// a program a shell could not find.
var missingRE = regexp.MustCompile(`(?m)^.*(` +
	`Cannot find (?:module|package) '[^'\n]*'|` + // Node: require / import
	`No module named '?[^'\n]*'?|` + // Python: import
	`can't open file '[^'\n]*'|` + // Python: the script
	`command not found|: not found$|` + // sh, bash
	`No such file or directory` + // env, interpreters, wrappers
	`).*$`)

// missingAtStart returns the line of stderr that says what a server that exited during the
// handshake was missing, trimmed and bounded, or "".
func missingAtStart(stderr string) string {
	m := missingRE.FindStringSubmatch(stderr)
	if m == nil {
		return ""
	}
	line := strings.TrimSpace(m[0])
	if strings.Contains(m[1], "Cannot find") {
		line = m[1] // Node prefixes "Error: " or "Error [ERR_MODULE_NOT_FOUND]: "
	}
	const limit = 300
	if len(line) > limit {
		line = line[:limit] + "…"
	}
	return line
}

// missingHint is the next step for a server missing what it needs to start.
func missingHint(line string) string {
	switch {
	case strings.Contains(line, "Cannot find"):
		return "install the server's dependencies (npm ci in its project; for mcpspec's examples: cd interop && npm ci), or correct the script's path in the command line"
	case strings.Contains(line, "No module named"):
		return "install the server's Python dependencies (in the environment its python runs in), or correct the command line"
	}
	return "check that the program and the files in the command line exist (relative paths in it start from the working directory, or the server's cwd:)"
}
