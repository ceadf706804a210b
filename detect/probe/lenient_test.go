package probe

import (
	"strings"
	"testing"
)

// statusOfKey returns the result of key (id@era), failing the test when the row did
// not run.
func statusOfKey(t *testing.T, rep *Report, k string) Result {
	t.Helper()
	r, ok := byKey(rep, k)
	if !ok {
		t.Fatalf("no result for %s;%s", k, describeFailures(rep, true))
	}
	return r
}

// TestHandshakeViolationDoesNotStopTheProbe: a server that answers initialize with a version
// that is none (1999-01-01) gets a FAIL row, and every other row still runs in that era (its
// answered notifications are found); its twin answering a real version passes the row.
func TestHandshakeViolationDoesNotStopTheProbe(t *testing.T) {
	t.Parallel()
	checks := []string{"lifecycle.*", "jsonrpc.*", "tools.list"}
	for _, c := range []struct {
		name, spec string
		want       Status
	}{
		{"bogus version", "testserver --answer-version 1999-01-01 --sloppy-jsonrpc", Fail},
		{"real version", "testserver --answer-version 2025-06-18", Pass},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: checks})
			r := statusOfKey(t, rep, "lifecycle.initialize@legacy")
			if r.Status != c.want {
				t.Errorf("lifecycle.initialize@legacy = %s (%s), want %s", r.Status, r.Message, c.want)
			}
			if c.want == Fail && !strings.Contains(r.Message, "1999-01-01") {
				t.Errorf("lifecycle.initialize@legacy message %q does not name the version", r.Message)
			}
			if got := statusOfKey(t, rep, "tools.list@legacy").Status; got != Pass {
				t.Errorf("tools.list@legacy = %s, want pass: the rows after the handshake run", got)
			}
			wantNotif := Pass
			if c.want == Fail {
				wantNotif = Fail // --sloppy-jsonrpc answers notifications
			}
			if got := statusOfKey(t, rep, "jsonrpc.notification-unanswered@legacy"); got.Status != wantNotif {
				t.Errorf("jsonrpc.notification-unanswered@legacy = %s (%s), want %s", got.Status, got.Message, wantNotif)
			}
		})
	}
}

// TestInvalidUTF8Receivers: a server that replaces bytes that are not UTF-8 with U+FFFD breaks
// no rule; one that rejects them passes; one that dies on them fails, though the next row
// finds it restarted.
func TestInvalidUTF8Receivers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, spec string
		want       Status
		msg        string
	}{
		{"rejects", "testserver", Pass, "rejected"},
		{"replaces", "testserver --replace-invalid-utf8", Pass, "U+FFFD"},
		{"crashes", "testserver --crash-on-invalid-utf8", Fail, "connection ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: []string{"transport.invalid-utf8"}})
			r := statusOfKey(t, rep, "transport.invalid-utf8")
			if r.Status != c.want || !strings.Contains(r.Message, c.msg) {
				t.Errorf("transport.invalid-utf8 = %s (%s), want %s mentioning %q", r.Status, r.Message, c.want, c.msg)
			}
		})
	}
}

// TestCutOutputIsNotSplitOutput: a message cut short on its line is malformed output
// (transport.valid-output), not a message split over lines; a message written over several
// lines is the reverse.
func TestCutOutputIsNotSplitOutput(t *testing.T) {
	t.Parallel()
	// progress.notifications makes the server send notifications, which --sloppy-stdio splits.
	checks := []string{"tools.list", "progress.notifications", "stdio.one-line-per-message", "transport.valid-output"}
	for _, c := range []struct {
		name, spec   string
		split, valid Status
	}{
		{"cut", "testserver --malformed-method tools/list", Pass, Fail},
		{"split", "testserver --sloppy-stdio", Fail, Pass},
		{"healthy", "testserver", Pass, Pass},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: checks})
			for _, era := range []string{"legacy", "stateless"} {
				if r := statusOfKey(t, rep, "stdio.one-line-per-message@"+era); r.Status != c.split {
					t.Errorf("stdio.one-line-per-message@%s = %s (%s), want %s", era, r.Status, r.Message, c.split)
				}
				if r := statusOfKey(t, rep, "transport.valid-output@"+era); r.Status != c.valid {
					t.Errorf("transport.valid-output@%s = %s (%s), want %s", era, r.Status, r.Message, c.valid)
				}
			}
		})
	}
}

// TestMultiLineMessagesFolded: a server's error message over many lines is shown folded onto
// one line, not cut at its first line break.
func TestMultiLineMessagesFolded(t *testing.T) {
	msg := "error -32603 ([\n  {\n    \"code\": \"invalid_type\"\n  }\n])"
	if got, want := oneLine(msg, 90), `error -32603 ([ { "code": "invalid_type" } ])`; got != want {
		t.Errorf("oneLine = %q, want %q", got, want)
	}
}
