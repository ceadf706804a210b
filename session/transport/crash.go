package transport

import (
	"regexp"
	"sync"
)

// crashReports match what a process writes to stderr when it dies of an unhandled fault: a Go
// panic or runtime fatal error, a Node uncaught exception (an Error line followed by a stack
// frame), a Python traceback, a Rust or JVM panic, a sanitizer or V8 report.
var crashReports = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(^panic: |^fatal error: |^goroutine \d+ \[running\]|^Traceback \(most recent call last\)|^\S*Error: .*\n\s+at |^thread '.*' panicked at|^Exception in thread |Segmentation fault|core dumped|AddressSanitizer|^FATAL ERROR: |Uncaught )`)
})

// HasCrashReport reports whether stderr holds the report of a process dying of an unhandled
// fault (a Go panic, a Python traceback, a Node uncaught exception, …).
func HasCrashReport(stderr string) bool { return crashReports().MatchString(stderr) }

// Crashed reports whether the process ended like a crash rather than an orderly exit: killed
// by a signal, an exit status of 2 or more, or a crash report in its last stderr lines. An
// exit status of 1 alone is how many servers end on input they refuse (log.Fatal, the Go
// SDK's stdio server).
func (e *ExitError) Crashed() bool {
	return e.Signal != "" || e.Code >= 2 || HasCrashReport(e.StderrTail)
}

// Orderly reports whether the process ended in order: exit status 0, no signal, no crash
// report in its last stderr lines. A server that exits so while a call waits left; it did not
// crash (the session layer calls it Disconnected, not Crash).
func (e *ExitError) Orderly() bool {
	return e.Code == 0 && e.Signal == "" && !HasCrashReport(e.StderrTail)
}
