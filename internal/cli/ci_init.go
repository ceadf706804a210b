package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/ciconfig"
	"github.com/mcpspec/mcpspec/internal/regfile"
)

func (a *app) ciInitCommand() *cli.Command {
	return &cli.Command{
		Name:  "ci-init",
		Usage: "write a CI pipeline that tests the repository's collections (GitHub, GitLab or a shell script)",
		UsageText: "mcpspec ci-init [--platform github|gitlab|shell] [--checks test,audit,score,load] [--server SPEC]\n" +
			"       [--collections PATH] [--min-score N] [--mcpspec-version V] [--force] [--dir DIR]\n\n" +
			"Writes .github/workflows/mcpspec.yml (github), .gitlab/mcpspec.gitlab-ci.yml to include from\n" +
			".gitlab-ci.yml (gitlab) or ci/mcpspec.sh (shell). The platform is detected when not given: a\n" +
			".github directory means github, a .gitlab-ci.yml file gitlab, else shell. The pipeline installs\n" +
			"mcpspec at this binary's version, runs the collections with the JUnit and HTML reporters and\n" +
			"publishes them; audit uploads SARIF, score gates on --min-score, load runs 10 s at 10/s.\n" +
			"An existing file is never replaced without --force.\n\n" +
			"Exit codes: 0 written · 3 bad flags, or the file exists (use --force).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "platform", Usage: "github, gitlab or shell (default: detected from the repository)"},
			&cli.StringFlag{Name: "checks", Usage: "comma-separated checks to run: test, audit, score, load (default: test, and audit with --server)"},
			&cli.StringFlag{Name: "server", Aliases: []string{"s"}, Usage: "the SPEC of the server that audit, score and load test (load defaults to the collections' servers)"},
			&cli.StringFlag{Name: "collections", Usage: "the collection file or directory `PATH`, relative to --dir (default: collections/)"},
			&cli.IntFlag{Name: "min-score", Value: ciconfig.DefaultMinScore, Usage: "the score check fails below `N` (0–100)"},
			&cli.StringFlag{Name: "mcpspec-version", Usage: "the mcpspec version `V` the pipeline installs (v1.2.3 or latest; default: this binary's, latest for a development build)"},
			&cli.BoolFlag{Name: "force", Usage: "replace the pipeline file if it exists"},
			&cli.StringFlag{Name: "dir", Value: ".", Usage: "the repository's root `DIR`"},
		},
		Action: a.ciInit,
	}
}

func (a *app) ciInit(_ context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	dir := cmd.String("dir")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--dir %s is not a directory", dir), Hint: "run mcpspec ci-init at the root of the repository, or pass --dir", Err: err}
	}
	o := &ciconfig.Options{Server: cmd.String("server"), Collections: cmd.String("collections"), MinScore: cmd.Int("min-score")}
	var err error
	how := "--platform"
	if s := cmd.String("platform"); s != "" {
		if o.Platform, err = ciconfig.ParsePlatform(s); err != nil {
			return usageError(cmd, err)
		}
	} else {
		o.Platform, how = ciconfig.Detect(os.DirFS(dir)), "detected"
	}
	rel := ciconfig.Path(o.Platform)
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Lstat(path); err == nil && !cmd.Bool("force") {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s exists: not replaced", path),
			Hint: "review it, then run again with --force to replace it (or --platform to write another)"}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("ci-init: %v", err), Err: err}
	}
	if s := cmd.String("checks"); s != "" {
		if o.Checks, err = ciconfig.ParseChecks(s); err != nil {
			return usageError(cmd, err)
		}
	} else if o.Server != "" {
		o.Checks = []ciconfig.Check{ciconfig.CheckTest, ciconfig.CheckAudit}
	}
	if o.MinScore < 0 || o.MinScore > 100 {
		return usageError(cmd, fmt.Errorf("--min-score %d is not within 0–100", o.MinScore))
	}
	o.Version = cmd.String("mcpspec-version")
	if o.Version == "" {
		o.Version = buildVersion()
		if o.Version == "devel" || strings.Contains(o.Version, "+") {
			fmt.Fprintf(a.io.Stderr, "note: this mcpspec is a development build (%s): the pipeline installs the latest release; pin one with --mcpspec-version\n", o.Version)
			o.Version = "latest"
		}
	}
	if o.Collections == "" {
		o.Collections = "collections/"
		if _, err := os.Stat(filepath.Join(dir, "collections")); err != nil {
			fmt.Fprintf(a.io.Stderr, "note: %s has no collections/ directory yet: put the collections there, or pass --collections PATH\n", dir)
		}
	}
	var buf bytes.Buffer
	if err := ciconfig.Render(&buf, o); err != nil {
		if errors.Is(err, ciconfig.ErrNoServer) {
			return &Error{Code: ExitConfig, Msg: "the audit and score checks need the server: --server SPEC", Err: err,
				Hint: "mcpspec ci-init --server 'npx -y my-server' --checks test,audit,score (a SPEC as for every verb)"}
		}
		return usageError(cmd, err)
	}
	perm := fs.FileMode(0o644)
	if o.Platform == ciconfig.Shell {
		perm = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("ci-init: %v", err), Err: err}
	}
	if err := regfile.WriteFile(path, buf.Bytes(), perm); err != nil {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("ci-init: write %s: %v", path, err), Err: err}
	}
	checks := o.Checks
	if len(checks) == 0 {
		checks = []ciconfig.Check{ciconfig.CheckTest}
	}
	names := make([]string, len(checks))
	for i, c := range checks {
		names[i] = string(c)
	}
	fmt.Fprintf(a.io.Stdout, "wrote %s (%s, %s; checks: %s; mcpspec %s)\n", path, o.Platform, how, strings.Join(names, ", "), o.Version)
	switch o.Platform {
	case ciconfig.GitLab:
		fmt.Fprintf(a.io.Stdout, "next: include it from .gitlab-ci.yml:\n  include:\n    - local: %s\n", rel)
	case ciconfig.Shell:
		fmt.Fprintf(a.io.Stdout, "next: run %s from your CI job, and publish %s/ as its artefact\n", rel, ciconfig.ReportDir)
	default:
		fmt.Fprintf(a.io.Stdout, "next: commit it; reports are in the %s artefact of each run\n", ciconfig.ReportDir)
	}
	return nil
}
