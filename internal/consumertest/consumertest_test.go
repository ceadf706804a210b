package consumertest

import "testing"

func TestPageConsoleProblems(t *testing.T) {
	logs := `[1:1:1126/003922.497271:INFO:CONSOLE:574] "Slow network", source: chrome://resources/x.js (574)
[9:9:1126/003922.497271:INFO:CONSOLE:3] "Uncaught ReferenceError: x", source: file:///tmp/a.html (3)
[30985:31015:1126/004456.838989:ERROR:dbus/bus.cc:405] Failed to connect to the bus`
	if got := PageConsoleProblems(logs); len(got) != 1 {
		t.Errorf("got %q, want the page's one error", got)
	}
}
