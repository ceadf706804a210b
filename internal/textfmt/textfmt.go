package textfmt

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Duration renders d compactly and deterministically: 850µs, 2.5ms, 12ms, 1.25s, 2m3s; zero
// and negative durations render as "0s".
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	default:
		return d.Round(time.Second).String()
	}
}

// Plural counts word regularly: "1 test", "2 tests", "0 tests".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// Excerpt returns at most n bytes of b as a string, marking a cut with "…".
func Excerpt(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// ShortCommit keeps the first 12 characters of a commit hash.
func ShortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// LastLines returns the last n non-empty lines of s (a server's stderr, say), each indented by
// two spaces and cut at 300 bytes with [Excerpt], joined by newlines.
func LastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(s, "\r\n"), "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			lines = append(lines, "  "+Excerpt([]byte(l), 300))
		}
	}
	if len(lines) > n {
		// A crash's stack trace pushes the line that names the error (Node's "RangeError: …",
		// Python's last "…Error: …", Go's "panic: …") above the last lines: keep the last such
		// line that is cut off, before the tail.
		cut := len(lines) - n
		head := -1
		for i := cut - 1; i >= 0 && i >= cut-200; i-- {
			if errorLineRE().MatchString(lines[i]) {
				head = i
				break
			}
		}
		tail := lines[cut:]
		if head >= 0 {
			tail = append([]string{lines[head], "  …"}, lines[cut+2:]...)
		}
		lines = tail
	}
	return strings.Join(lines, "\n")
}

// errorLineRE matches a stderr line that names an error rather than a stack frame.
var errorLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(panic:|fatal error:|Traceback|[A-Z][A-Za-z]*(Error|Exception)\b:?|Error:|FATAL|Uncaught)`)
})
