//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sweepBound is how long any one run of the sweep may take, misbehaving server included.
const sweepBound = 15 * time.Second

// sweepParallel is how many runs of the sweep go at once.
const sweepParallel = 6

// sweepCase is one command line of the "no input crashes us" sweep and what it must give: an
// exit code from the README's list, a message matching want (stdout and stderr together), and a
// hint. Every case also checks that mcpspec did not panic, finished within sweepBound, and left
// no process behind.
type sweepCase struct {
	name string
	args []string // "{fix}" is replaced by the directory of the shared fixtures
	code ExitCode
	want string
	// files are written to the working directory first.
	files map[string]string
}

// TestNoInputCrashesUs runs the real binary on garbage flags, broken collections and servers
// that misbehave in every way we know. The runs go sweepParallel at a time and are judged one
// by one, each against its own start.
func TestNoInputCrashesUs(t *testing.T) {
	t.Parallel()
	var cases []sweepCase
	cases = append(cases, flagCases()...)
	cases = append(cases, collectionCases()...)
	cases = append(cases, serverCases()...)

	fix := t.TempDir()
	sweepFixtures(t, fix)
	procs := make([]*mcpspecProc, len(cases))
	starts := make([]time.Time, len(cases))
	// At most sweepParallel runs at once, each judged against its own start: 60 processes
	// started together on 2 busy cores took longer than the bound before doing anything.
	slots := make(chan struct{}, sweepParallel)
	for i, tc := range cases {
		slots <- struct{}{}
		dir := t.TempDir() // each run's own working directory (and .mcpspec state)
		for name, data := range tc.files {
			writeFile(t, dir, name, data)
		}
		args := make([]string, len(tc.args))
		for j, a := range tc.args {
			args[j] = strings.ReplaceAll(a, "{fix}", fix)
		}
		starts[i] = time.Now()
		procs[i] = startMcpspec(t, dir, args...)
		go func(p *mcpspecProc) {
			t := time.NewTimer(sweepBound)
			defer t.Stop()
			select {
			case <-p.exited:
			case <-t.C:
			}
			<-slots
		}(procs[i])
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := procs[i]
			code := p.wait(t, max(time.Until(starts[i].Add(sweepBound)), 0))
			t.Logf("exit %d after %v", code, time.Since(starts[i]).Round(time.Millisecond))
			stdout, stderr := p.stdout.String(), p.stderr.String()
			assertNoPanic(t, stderr)
			p.assertNoLeftovers(t)
			if code != int(tc.code) {
				t.Errorf("exit code = %d, want %d (%s)\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.args, tail(stdout), tail(stderr))
			}
			if !regexp.MustCompile(tc.want).MatchString(stdout + stderr) {
				t.Errorf("output does not match %q\nstdout:\n%s\nstderr:\n%s", tc.want, tail(stdout), tail(stderr))
			}
			if code == int(ExitOK) {
				return
			}
			if !strings.Contains(stderr, "Error: ") {
				t.Errorf("stderr has no Error: line:\n%s", tail(stderr))
			}
			if !strings.Contains(stderr, "\nHint: ") && !strings.Contains(stdout, "hint:") {
				t.Errorf("no hint on stderr (Hint:) nor in the report (hint:)\nstdout:\n%s\nstderr:\n%s", tail(stdout), tail(stderr))
			}
		})
	}
}

// sweepFixtures writes the files the cases name: a good collection, broken ones, a file where
// a directory should be.
func sweepFixtures(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, dir, "good.yaml", "name: Good\nserver: testserver\ntests:\n  - name: Echo\n    call: echo\n    with: {text: hi}\n")
	writeFile(t, dir, "empty.yaml", "")
	writeFile(t, dir, "afile", "a file, not a directory\n")
	// Bytes of every value, as a binary file would have.
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	writeFile(t, dir, "binary.yaml", string(bin))
	// 2 MiB of valid tests.
	var big strings.Builder
	big.WriteString("name: Big\nserver: testserver\ntests:\n")
	for i := 0; big.Len() < 2<<20; i++ {
		fmt.Fprintf(&big, "  - name: t%d\n    call: echo\n    with: {text: %q}\n", i, strings.Repeat("x", 200))
	}
	writeFile(t, dir, "big.yaml", big.String())
	// A billion laughs: nine levels of nine aliases each.
	var bomb strings.Builder
	bomb.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for c := 'b'; c <= 'j'; c++ {
		ref := "*" + string(c-1)
		fmt.Fprintf(&bomb, "%c: &%c [%s]\n", c, c, strings.TrimSuffix(strings.Repeat(ref+",", 9), ","))
	}
	writeFile(t, dir, "bomb.yaml", bomb.String())
	if err := os.Mkdir(filepath.Join(dir, "noyaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "noyaml"), "README.txt", "no collections here\n")
}

// flagCases are bad command-line values: each is a config error (3) naming the flag.
func flagCases() []sweepCase {
	call := func(extra ...string) []string {
		return append([]string{"call", "--server", "testserver", "echo", "--args", `{"text":"x"}`}, extra...)
	}
	test := func(extra ...string) []string { return append([]string{"test", "{fix}/good.yaml"}, extra...) }
	return []sweepCase{
		{"call --timeout -1s", call("--timeout", "-1s"), ExitConfig, `--timeout must be positive`, nil},
		{"call --timeout abc", call("--timeout", "abc"), ExitConfig, `--timeout "abc" is not a duration`, nil},
		{"call --server ''", []string{"call", "--server", "", "echo"}, ExitConfig, `missing --server`, nil},
		{"tools --server ''", []string{"tools", "--server", ""}, ExitConfig, `missing --server`, nil},
		{"call --server unterminated quote", []string{"call", "--server", `unterminated "quote`, "echo"}, ExitConfig, `unterminated double quote`, nil},
		{"call --args array", []string{"call", "--server", "testserver", "echo", "--args", "[1,2]"}, ExitConfig, `--args must be a JSON object`, nil},
		{"call --args @missing", []string{"call", "--server", "testserver", "echo", "--args", "@/nonexistent"}, ExitConfig, `read --args @/nonexistent`, nil},
		{"call --protocol-version 1999-01-01", call("--protocol-version", "1999-01-01"), ExitConfig, `unknown --protocol-version "1999-01-01"`, nil},
		{"tools --protocol-version 1999-01-01", []string{"tools", "--server", "testserver", "--protocol-version", "1999-01-01"}, ExitConfig, `unknown --protocol-version`, nil},
		{"call --transport bogus", call("--transport", "bogus"), ExitConfig, `unknown --transport "bogus"`, nil},
		{"call --header novalue", call("--header", "novalue"), ExitConfig, `--header "novalue" is not K=V`, nil},
		{"test --reporter nosuch", test("--reporter", "nosuch"), ExitConfig, `unknown reporter`, nil},
		// The report cannot be written: a runtime error, before any server starts.
		{"test --reporter junit under a file", test("--reporter", "junit={fix}/afile/x.xml"), ExitConfig, `cannot write the junit report: cannot create the directory of .*afile/x\.xml`, nil},
		{"test --reporter json to a directory", test("--reporter", "json={fix}/noyaml"), ExitConfig, `cannot write the json report to .*noyaml: is a directory`, nil},
		{"test --parallel 0", test("--parallel", "0"), ExitConfig, `--parallel must be between 1 and 256, got 0`, nil},
		{"test --parallel -3", test("--parallel", "-3"), ExitConfig, `--parallel must be between 1 and 256, got -3`, nil},
		{"test --rate -1", test("--rate", "-1"), ExitConfig, `--rate must not be negative`, nil},
		{"test --timeout abc", test("--timeout", "abc"), ExitConfig, `--timeout "abc" is not a duration`, nil},
	}
}

// collectionCases are files that are not usable collections: each is a config error (3).
func collectionCases() []sweepCase {
	return []sweepCase{
		{"empty collection", []string{"test", "{fix}/empty.yaml"}, ExitConfig, `empty\.yaml: collection is empty`, nil},
		{"binary collection", []string{"test", "{fix}/binary.yaml"}, ExitConfig, `binary\.yaml:1:\d+: not a text file`, nil},
		{"2 MiB collection", []string{"test", "{fix}/big.yaml"}, ExitConfig, `big\.yaml: collection is larger than`, nil},
		{"YAML alias bomb", []string{"test", "{fix}/bomb.yaml"}, ExitConfig, `bomb\.yaml:1:4: YAML anchors`, nil},
		{"validate YAML alias bomb", []string{"validate", "{fix}/bomb.yaml"}, ExitConfig, `aliases are not supported`, nil},
		{"directory without YAML", []string{"test", "{fix}/noyaml"}, ExitConfig, `no \*\.yaml or \*\.yml file in .*noyaml`, nil},
		{"missing collection", []string{"test", "{fix}/nosuch.yaml"}, ExitConfig, `nosuch\.yaml`, nil},
	}
}

// misbehaving is a server that misbehaves and what each verb must make of it.
type misbehaving struct {
	name string
	spec string
	// call, tools and test are the exit codes of `call echo`, `tools` and `test` (one echo test);
	// the want fields match their messages.
	call, tools, test             ExitCode
	callWant, toolsWant, testWant string
}

// Shell servers for the stdio edge cases.
const (
	exitsAtOnce   = `sh -c 'exit 3'`
	printsGarbage = `sh -c 'yes garbage | head -c 100000; sleep 5'`
	floodsALine   = `sh -c 'head -c 20971520 /dev/zero | tr "\000" x; echo; sleep 5'`
	closesStdout  = `sh -c 'exec 1>&-; sleep 30'`
)

// garbageQuoted matches a handshake failure that quotes the garbage a stdio server printed and
// names the stdout rule, either in the message or in the hint (introduced by hintLabel).
func garbageQuoted(hintLabel string) string {
	return `during the handshake(: garbage(.|\n)*stdout must carry only MCP messages|(.|\n)*` + hintLabel + ` first the server wrote "garbage" to stdout)`
}

func misbehavingServers() []misbehaving {
	const listed = `[0-9]+ tools from mcptest` // 6, or 5 when a slow start makes era detection settle on the legacy era
	return []misbehaving{
		// Faults of tools/call: tools/list works, so `tools` succeeds.
		{"malformed", "testserver --malformed-every 1", ExitRuntime, ExitOK, ExitFailure,
			`malformed message during tools/call`, listed, `error: Malformed`},
		{"both result and error", "testserver --both-result-and-error", ExitRuntime, ExitOK, ExitFailure,
			`both result and error`, listed, `error: ProtocolError`},
		{"wrong id", "testserver --wrong-id", ExitRuntime, ExitOK, ExitFailure,
			`unknown id [0-9]+ \(never issued\)`, listed, `error: ProtocolError`},
		{"crash", "testserver --crash-rate 1", ExitConnection, ExitOK, ExitFailure,
			`server exited with code 1 during tools/call`, listed, `error: Crash`},
		{"hang", "testserver --hang-first-call", ExitTimeout, ExitOK, ExitFailure,
			`no answer during tools/call "echo" within --timeout 3s`, listed, `error: Timeout`},
		// Faults of the start or the handshake: every verb fails to connect.
		{"slow initialize", "testserver --slow-initialize 1h", ExitConnection, ExitConnection, ExitConnection,
			`no answer during the handshake within --connect-timeout 2s`, `within --connect-timeout 2s`, `during the handshake within 2s`},
		{"exits at once", exitsAtOnce, ExitConnection, ExitConnection, ExitConnection,
			`server exited with code 3 during the handshake`, `exited with code 3`, `exited with code 3 during the handshake`},
		// The hint quotes the garbage: the usual cause is logging on stdout.
		// The handshake fails on the garbage itself (Malformed, quoted in the message) or times
		// out after it (the garbage quoted in the hint), depending on when the lines arrive.
		{"garbage on stdout", printsGarbage, ExitConnection, ExitConnection, ExitConnection,
			garbageQuoted("Hint:"), garbageQuoted("Hint:"), garbageQuoted("hint: +")},
		{"20 MiB line", floodsALine, ExitConnection, ExitConnection, ExitConnection,
			`during the handshake`, `during the handshake`, `during the handshake`},
		// The handshake deadline (2s) passes before the transport gives up waiting for the
		// process to exit after its stdout closed: either message is right.
		{"closes stdout", closesStdout, ExitConnection, ExitConnection, ExitConnection,
			`(closed its stdout|no answer) during the handshake`, `(closed its stdout|no answer) during the handshake`, `(closed its stdout|no answer from server "default") during the handshake`},
	}
}

// serverCases runs call, tools and test against every misbehaving server, with deadlines short
// enough to keep the sweep fast: 3s per request, and 2s for the start and handshake of servers
// that fail there.
func serverCases() []sweepCase {
	var out []sweepCase
	for _, m := range misbehavingServers() {
		limits := []string{"--timeout", "3s", "--connect-timeout", "2s"}
		switch {
		case m.tools == ExitOK:
			// The handshake works: give it room on a loaded machine (-race, 2 cores, every case
			// at once), so only the fault under test can fail the run.
			limits[3] = "10s"
		case m.spec == printsGarbage:
			// The garbage must arrive before the handshake's deadline to be quoted: on a loaded
			// machine starting the shell pipeline alone can take seconds.
			limits[3] = "6s"
		}
		out = append(out,
			sweepCase{"call/" + m.name, append([]string{"call", "--server", m.spec, "echo", "--args", `{"text":"x"}`}, limits...), m.call, m.callWant, nil},
			sweepCase{"tools/" + m.name, append([]string{"tools", "--server", m.spec}, limits...), m.tools, m.toolsWant, nil},
		)
		// The collection is written next to the others; the SPEC is a JSON string, which YAML
		// reads as a double-quoted scalar.
		specJSON, _ := json.Marshal(m.spec)
		col := fmt.Sprintf("name: Misbehaving\nserver: %s\ntests:\n  - name: Echo\n    call: echo\n    with: {text: hi}\n", specJSON)
		out = append(out, sweepCase{"test/" + m.name,
			append([]string{"test", "misbehaving.yaml"}, limits...), m.test, m.testWant,
			map[string]string{"misbehaving.yaml": col}})
	}
	// The handshake is bounded by timeouts.connect, not by the test's shorter timeout: the
	// message names the limit that applied and the hint the setting.
	out = append(out, sweepCase{"test/handshake bounded by timeouts.connect",
		[]string{"test", "short.yaml"}, ExitConnection, `no answer from server "default" during the handshake within 2s(.|\n)*hint: .*raise timeouts.connect`,
		map[string]string{"short.yaml": "name: Short\nserver: {transport: testserver, args: [--slow-initialize, 1h], timeouts: {connect: 2s}}\ndefaults:\n  timeout: 500ms\ntests:\n  - name: Echo\n    call: echo\n    with: {text: hi}\n"}})
	return out
}
