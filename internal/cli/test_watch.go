package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
)

// watch runs, then waits for a collection file to change and runs again, until ctx ends. A watch
// ends only by a signal, so it always ends interrupted (exit 130, as docs/exit-codes.md says):
// with the interrupted run's error, or, when Ctrl-C came while waiting, with its own.
func (a *app) watch(ctx context.Context, cfg *testConfig) error {
	for {
		files := watchedFiles(cfg.paths)
		stamp := stamps(files)
		a.started = time.Now()
		err := a.testOnce(ctx, cfg)
		if ctx.Err() != nil {
			return err // Run keeps this last, interrupted run
		}
		// Every run of a watch is a run of its own in the history.
		a.finishRun(ctx, exitCodeOf(ctx, err), cfg.noHistory)
		a.kept = nil
		if err != nil {
			report(a.io.Stderr, err, exitCodeOf(ctx, err), false)
		}
		fmt.Fprintf(a.io.Stderr, "Watching %s for changes (Ctrl-C to stop)…\n", textfmt.Plural(len(files), "file"))
		t := time.NewTicker(watchPoll)
		changed := false
		for !changed {
			select {
			case <-ctx.Done():
				t.Stop()
				return &Error{Code: ExitInterrupted, Msg: "watch stopped", Err: context.Cause(ctx)}
			case <-t.C:
				files = watchedFiles(cfg.paths)
				now := stamps(files)
				changed = !equalStamps(stamp, now)
			}
		}
		t.Stop()
		fmt.Fprintln(a.io.Stderr, "Change detected; running again.")
	}
}

// watchedFiles lists the collection files and directories behind paths.
func watchedFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			for _, pat := range []string{"*.yaml", "*.yml"} {
				m, _ := filepath.Glob(filepath.Join(p, pat))
				out = append(out, m...)
			}
		}
	}
	return out
}

// stamps records each file's modification time and size ("" when missing).
func stamps(files []string) map[string]string {
	out := make(map[string]string, len(files))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			out[f] = fmt.Sprintf("%d/%d", st.ModTime().UnixNano(), st.Size())
		} else {
			out[f] = ""
		}
	}
	return out
}

func equalStamps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
