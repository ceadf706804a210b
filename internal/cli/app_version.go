package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v3"
)

// version is set at link time: go build -ldflags "-X github.com/mcpspec/mcpspec/internal/cli.version=v1.2.3".
// It and commit are the only package-level variables of this package.
var version string

// commit is set at link time (-X github.com/mcpspec/mcpspec/internal/cli.commit=SHA) by release
// builds (.goreleaser.yaml, the Dockerfile); else the VCS stamp of the build info serves.
var commit string

// buildVersion returns the link-time version, else the module version from the build info,
// else "devel".
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// vcsRevision returns the commit the binary was built from, if recorded.
func vcsRevision() (rev string, modified bool) {
	if commit != "" {
		return commit, false
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}

func (a *app) versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version of mcpspec",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON on stdout"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
			}
			rev, modified := vcsRevision()
			if cmd.Bool("json") {
				return writeJSON(a.io.Stdout, struct {
					Version  string `json:"version"`
					Go       string `json:"go"`
					Platform string `json:"platform"`
					Commit   string `json:"commit,omitempty"`
					Modified bool   `json:"modified,omitempty"`
				}{buildVersion(), runtime.Version(), runtime.GOOS + "/" + runtime.GOARCH, rev, modified})
			}
			_, err := fmt.Fprintf(a.io.Stdout, "mcpspec version %s\n", buildVersion())
			return err
		},
	}
}
