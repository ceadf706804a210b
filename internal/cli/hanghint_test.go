package cli

import (
	"testing"

	"github.com/urfave/cli/v3"
)

// TestTimeoutHintNamesOnlyShownFlags: a request that times out suggests --hang-threshold only on
// verbs that show it; deadlock and fuzz have their own --hang-after instead (their hidden
// --hang-threshold is that, not the session's hang detector the hint means).
func TestTimeoutHintNamesOnlyShownFlags(t *testing.T) {
	a := newApp(&IO{TempDir: t.TempDir()})
	cmds := map[string]*cli.Command{}
	for _, c := range a.verbs() {
		cmds[c.Name] = c
	}
	for verb, want := range map[string]string{"call": "--hang-threshold", "score": "--hang-threshold", "deadlock": "", "fuzz": "", "race": ""} {
		f := readServerFlags(cmds[verb])
		f.Server, f.Timeout, f.ConnectTimeout = "testserver", defaultTimeout, defaultConnectTimeout
		tg, err := a.prepare(f, verb)
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		if got := tg.connOpts.Terms.HangThreshold; got != want {
			t.Errorf("%s: a timeout's hint suggests %q, want %q", verb, got, want)
		}
		tg.finish(false)
	}
}
