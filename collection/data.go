package collection

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/assert"
)

// Limits of a data file (`mcpspec test --data`): it is untrusted input.
const (
	// MaxDataSize is the largest data file read.
	MaxDataSize = 16 << 20
	// MaxDataRows is the most rows (iterations) a data file may hold.
	MaxDataRows = 10_000
)

// DataRow is one row of a data file: the variables of one iteration of a data-driven run.
type DataRow struct {
	// Index counts the rows from 1 (the CSV header is not a row).
	Index int
	// Label names the iteration in reports: "row 3", or the key column's value.
	Label string
	// Values are the row's variables: CSV cells read as YAML scalars (as --var values are),
	// JSON values as they are.
	Values map[string]any
}

// dataNameRE is what a column (a variable) may be called.
var dataNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_\-]*$`) })

// ReadData reads a data file: CSV (a header row naming the variables, then one row per
// iteration) or JSON (an array of objects), told apart by the name's extension (.csv, .json)
// or, without one, by the first character. key, when not empty, names the column whose values
// label the iterations (they must be present and distinct). Every problem names the row.
func ReadData(name string, r io.Reader, key string) ([]DataRow, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDataSize+1))
	if err != nil {
		return nil, fmt.Errorf("read data %s: %w", name, err)
	}
	if len(data) > MaxDataSize {
		return nil, fmt.Errorf("data %s is larger than %s", name, sizeText(MaxDataSize))
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var rows []DataRow
	switch ext := strings.ToLower(filepath.Ext(name)); {
	case ext == ".json", ext != ".csv" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")):
		rows, err = readJSONData(data)
	default:
		rows, err = readCSVData(data)
	}
	if err != nil {
		return nil, fmt.Errorf("data %s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("data %s holds no rows", name)
	}
	if err := labelRows(rows, key); err != nil {
		return nil, fmt.Errorf("data %s: %w", name, err)
	}
	return rows, nil
}

// readCSVData reads a header row and the rows under it; cells are YAML scalars.
func readCSVData(data []byte) ([]DataRow, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty: a CSV data file starts with a header row naming the variables")
	}
	if err != nil {
		return nil, csvError(err)
	}
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		if !dataNameRE().MatchString(h) {
			return nil, fmt.Errorf("header column %d: %q is not a variable name (letters, digits, _ and -, not starting with a digit)", i+1, h)
		}
		if seen[h] {
			return nil, fmt.Errorf("header: column %q appears twice", h)
		}
		seen[h] = true
	}
	var rows []DataRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		if len(rows) >= MaxDataRows {
			return nil, fmt.Errorf("more than %d rows", MaxDataRows)
		}
		cells := make(map[string]string, len(rec))
		for i, v := range rec {
			cells[header[i]] = v
		}
		rows = append(rows, DataRow{Index: len(rows) + 1, Values: scalars(cells)})
	}
	return rows, nil
}

// csvError names the line of a CSV problem.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: the row has not as many cells as the header has columns", pe.Line)
		}
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}

// readJSONData reads an array of objects.
func readJSONData(data []byte) ([]DataRow, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw []json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of objects: %v", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON array")
	}
	if len(raw) > MaxDataRows {
		return nil, fmt.Errorf("more than %d rows", MaxDataRows)
	}
	rows := make([]DataRow, 0, len(raw))
	for i, r := range raw {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil || m == nil {
			return nil, fmt.Errorf("row %d is not a JSON object", i+1)
		}
		for k, v := range m {
			if !dataNameRE().MatchString(k) {
				return nil, fmt.Errorf("row %d: %q is not a variable name", i+1, k)
			}
			nv, err := jsonNumbers(v, 1)
			if err != nil {
				return nil, fmt.Errorf("row %d: %s: %v", i+1, k, err)
			}
			m[k] = nv
		}
		rows = append(rows, DataRow{Index: i + 1, Values: m})
	}
	return rows, nil
}

// jsonNumbers turns json.Numbers into int64 (float64 when not an integer or out of range), as
// the collection's own values are, through a value nested at most DefaultMaxDepth levels.
func jsonNumbers(v any, depth int) (any, error) {
	if depth > DefaultMaxDepth {
		return nil, fmt.Errorf("nests deeper than %d levels", DefaultMaxDepth)
	}
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return i, nil
		}
		return v.Float64()
	case []any:
		for i, e := range v {
			ne, err := jsonNumbers(e, depth+1)
			if err != nil {
				return nil, err
			}
			v[i] = ne
		}
	case map[string]any:
		for k, e := range v {
			ne, err := jsonNumbers(e, depth+1)
			if err != nil {
				return nil, err
			}
			v[k] = ne
		}
	}
	return v, nil
}

// labelRows names each row "row N", or by its key column, whose values must be distinct.
func labelRows(rows []DataRow, key string) error {
	seen := map[string]int{}
	for i := range rows {
		r := &rows[i]
		if key == "" {
			r.Label = "row " + strconv.Itoa(r.Index)
			continue
		}
		v, ok := r.Values[key]
		label := ""
		if v != nil {
			label = strings.TrimSpace(assert.ToString(v))
		}
		if !ok || label == "" {
			return fmt.Errorf("row %d has no value in the key column %q", r.Index, key)
		}
		if prev, dup := seen[label]; dup {
			return fmt.Errorf("rows %d and %d have the same %s %q: the key column must tell the iterations apart", prev, r.Index, key, label)
		}
		seen[label] = r.Index
		r.Label = label
	}
	return nil
}
