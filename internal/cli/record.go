package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session/recording"
)

func (a *app) recordCommand() *cli.Command {
	return &cli.Command{
		Name:  "record",
		Usage: "recordings of real traffic: list, delete, replay against a server, turn into a collection",
		UsageText: "mcpspec record start NAME --server SPEC      (an inspect session, recorded)\n" +
			"mcpspec record list [--dir DIR] [--json]\n" +
			"mcpspec record delete NAME\n" +
			"mcpspec record replay NAME --server SPEC [--ignore PATH]… [--json]\n" +
			"mcpspec record to-collection NAME [-o FILE]\n\n" +
			"Recordings are made by mcpspec proxy (see docs/record.md).",
		Commands: []*cli.Command{
			a.recordStartCommand(),
			{
				Name:   "list",
				Usage:  "list the recordings: name, frames, duration, server, size",
				Flags:  []cli.Flag{dirFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON on stdout"}},
				Action: a.recordList,
			},
			{
				Name:      "delete",
				Usage:     "delete a recording",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{dirFlag()},
				Action:    a.recordDelete,
			},
			a.recordReplayCommand(),
			a.recordToCollectionCommand(),
		},
	}
}

// recordingJSON is one row of record list --json.
type recordingJSON struct {
	Name            string  `json:"name"`
	Path            string  `json:"path"`
	Frames          int     `json:"frames"`
	DurationMs      float64 `json:"durationMs"`
	Server          string  `json:"server"`
	Transport       string  `json:"transport,omitempty"`
	ProtocolVersion string  `json:"protocolVersion,omitempty"`
	Started         string  `json:"started,omitempty"`
	Size            int64   `json:"size"`
	Error           string  `json:"error,omitempty"`
}

func (a *app) recordList(ctx context.Context, cmd *cli.Command) error {
	dir := cmd.String("dir")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &Error{Code: ExitConfig, Msg: "cannot list the recordings: " + err.Error(), Err: err}
	}
	rows := []recordingJSON{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), recording.Ext) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		row := recordingJSON{Name: strings.TrimSuffix(e.Name(), recording.Ext), Path: path}
		if st, err := e.Info(); err == nil {
			row.Size = st.Size()
		}
		rec, err := recording.ReadFile(path, 0)
		if err != nil {
			row.Error = err.Error()
		} else {
			row.Frames, row.DurationMs = len(rec.Entries), float64(rec.Duration().Microseconds())/1000
			row.Server, row.Transport, row.ProtocolVersion = rec.Header.Server, rec.Header.Transport, rec.ProtocolVersion()
			row.Started = rec.Header.Started.Format(time.RFC3339)
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(x, y recordingJSON) int { return strings.Compare(x.Name, y.Name) })
	if cmd.Bool("json") {
		b, _ := json.MarshalIndent(map[string]any{"dir": dir, "recordings": rows}, "", "  ")
		fmt.Fprintln(a.io.Stdout, string(b))
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintf(a.io.Stdout, "no recordings in %s (make one with mcpspec proxy --server SPEC)\n", dir)
		return nil
	}
	// A recording is a file anyone may have edited: its text is printed cleaned.
	tw := tabwriter.NewWriter(cleanWriter{a.io.Stdout}, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFRAMES\tDURATION\tSERVER\tSIZE")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t(unreadable: %s)\t%s\n", r.Name, r.Error, regfile.Size(r.Size))
			continue
		}
		d := time.Duration(r.DurationMs * float64(time.Millisecond)).Round(time.Millisecond)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Name, r.Frames, d, r.Server, regfile.Size(r.Size))
	}
	return tw.Flush()
}

// recordingArg reads the NAME argument of a record verb and returns its path, which must exist.
func recordingArg(cmd *cli.Command) (name, path string, err error) {
	if cmd.Args().Len() != 1 {
		return "", "", &Error{Code: ExitConfig, Msg: fmt.Sprintf("mcpspec %s takes one recording NAME", cmd.FullName()),
			Hint: "list the recordings with mcpspec record list"}
	}
	name = strings.TrimSuffix(cmd.Args().First(), recording.Ext)
	path, err = recordingPath(cmd.String("dir"), name)
	if err != nil {
		return "", "", err
	}
	if _, err := os.Lstat(path); err != nil {
		return "", "", &Error{Code: ExitConfig, Msg: fmt.Sprintf("no recording named %q in %s", name, cmd.String("dir")),
			Hint: "list the recordings with mcpspec record list --dir " + cmd.String("dir")}
	}
	return name, path, nil
}

// loadRecording reads the recording NAME names; a bad one is a config error with file:line.
func loadRecording(cmd *cli.Command) (string, *recording.Recording, error) {
	name, path, err := recordingArg(cmd)
	if err != nil {
		return "", nil, err
	}
	rec, err := recording.ReadFile(path, 0)
	if err != nil {
		return "", nil, &Error{Code: ExitConfig, Msg: "cannot read the recording: " + err.Error(), Err: err,
			Hint: "recordings are written by mcpspec proxy; a file edited by hand must keep one JSON object per line"}
	}
	return name, rec, nil
}

func (a *app) recordDelete(ctx context.Context, cmd *cli.Command) error {
	name, path, err := recordingArg(cmd)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot delete the recording: " + err.Error(), Err: err}
	}
	fmt.Fprintf(a.io.Stdout, "deleted recording %s (%s)\n", name, path)
	return nil
}
