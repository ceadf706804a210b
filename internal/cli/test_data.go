package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/reporters"
)

// dataFlags are --data FILE and --data-key COLUMN.
type dataFlags struct {
	path, key string
}

// readDataFlags reads --data and --data-key; nil without --data.
func readDataFlags(cmd *cli.Command) (*dataFlags, error) {
	path, key := cmd.String("data"), cmd.String("data-key")
	switch {
	case path == "" && key != "":
		return nil, &Error{Code: ExitConfig, Msg: "--data-key needs --data", Hint: "mcpspec test COLLECTION --data rows.csv --data-key id"}
	case path == "":
		return nil, nil
	}
	return &dataFlags{path: path, key: key}, nil
}

// rows reads the data file (again at every run, so --watch sees it change).
func (d *dataFlags) rows() ([]collection.DataRow, error) {
	f, err := regfile.OpenLimit(d.path, collection.MaxDataSize)
	if err != nil {
		msg := fmt.Sprintf("cannot read --data: %v", err)
		if errors.Is(err, os.ErrNotExist) {
			msg = fmt.Sprintf("--data %s: no such file", d.path)
		}
		return nil, &Error{Code: ExitConfig, Msg: msg, Hint: "a CSV file with a header row, or a JSON array of objects", Err: err}
	}
	defer f.Close()
	rows, err := collection.ReadData(d.path, f, d.key)
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: err.Error(), Err: err,
			Hint: "CSV: a header row naming the variables, then one row per run; JSON: [{\"name\": value, …}, …]"}
	}
	return rows, nil
}

// loadIterations loads the collections; with --data, once per row with the row's values as
// variables, each iteration's collection named after its row ("Quickstart [row 2]").
func loadIterations(paths []string, load *collection.LoadOptions, data *dataFlags, verb string) ([]*collection.Collection, error) {
	if data == nil {
		return loadCollections(paths, load, verb)
	}
	rows, err := data.rows()
	if err != nil {
		return nil, err
	}
	var all []*collection.Collection
	for _, row := range rows {
		lo := *load
		lo.Data = row.Values
		cols, err := loadCollections(paths, &lo, verb)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				ce.Msg = fmt.Sprintf("with --data %s (%s): %s", data.path, row.Label, ce.Msg)
			}
			return nil, err
		}
		for _, c := range cols {
			name := c.Name
			if name == "" {
				name = filepath.Base(c.File)
			}
			c.Name = fmt.Sprintf("%s [%s]", name, row.Label)
		}
		all = append(all, cols...)
	}
	return all, nil
}

// jsonWithReporters checks that --json (the results document on stdout) is the only thing
// writing to stdout.
func jsonWithReporters(entries []string) error {
	for _, e := range entries {
		if name, path, _ := strings.Cut(e, "="); strings.TrimSpace(path) == "" {
			name = strings.ToLower(strings.TrimSpace(name))
			return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--json prints the results on stdout, and so does --reporter %s", e),
				Hint: fmt.Sprintf("give that reporter a file: --reporter %s=out/report%s (or drop --json)", name, reporters.Extension(name))}
		}
	}
	return nil
}
