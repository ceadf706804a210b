package fuzz

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
)

// SavedServer is how a saved collection reaches the fuzzed server: a SPEC (`server: SPEC`), or
// the keys of a collection server when any of the other fields is set.
type SavedServer struct {
	Spec            string
	Transport       string
	Command         string
	Args            []string
	Env             map[string]string
	Cwd             string
	URL             string
	Headers         map[string]string
	ProtocolVersion string
	// Secrets names the {{secret.NAME}} references the fields above hold, which a replay reads
	// from the environment (the saved file says so in a comment).
	Secrets []string
}

// SaveOptions configures [WriteFindings].
type SaveOptions struct {
	// Server is the fuzzed server.
	Server SavedServer
	// Name names the collection (default "fuzz findings").
	Name string
	// HangAfter is the fuzzer's hang threshold: a saved hang's test times out at twice it.
	HangAfter time.Duration
}

// Saved says what [WriteFindings] wrote: how many tests, and which findings it could not turn
// into a test that fails while the bug is there, and why.
type Saved struct {
	Tests   int
	Skipped map[string]string // finding ID → reason
}

// WriteFindings writes rep's findings as a collection file that `mcpspec test` replays: one
// test per finding, each failing while its bug is there. A schema finding is a tools/call with
// the minimised arguments (expecting an error when they break the tool's inputSchema); one
// whose arguments YAML cannot carry exactly (lone surrogates, numbers beyond float64, a
// template-like string) or whose validity is unknown is the raw tools/call frame; a frame
// finding is a `frame:` step with the minimised frame, as text or base64.
func WriteFindings(w io.Writer, rep *Report, o *SaveOptions) (*Saved, error) {
	if o == nil {
		o = &SaveOptions{}
	}
	hang := o.HangAfter
	if hang <= 0 {
		hang = DefaultHangAfter
	}
	doc := savedDoc{Name: o.Name, Server: o.Server.yaml()}
	if doc.Name == "" {
		doc.Name = "fuzz findings"
	}
	saved := &Saved{Skipped: map[string]string{}}
	for i, f := range rep.Findings {
		t, why := f.savedTest(rep, i+1)
		if why != "" {
			saved.Skipped[f.ID] = why
			continue
		}
		if f.Outcome == Hang {
			t.Timeout = (2*hang + 5*time.Second).String()
		}
		doc.Tests = append(doc.Tests, t)
	}
	saved.Tests = len(doc.Tests)
	if len(doc.Tests) == 0 {
		return saved, fmt.Errorf("fuzz: save findings: no finding can be saved as a test")
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Regression tests saved by mcpspec fuzz (seed %d, %d cases): each fails while its bug is there.\n", rep.Seed, rep.Cases)
	fmt.Fprintf(&b, "# Replay them with: mcpspec test FILE\n")
	if len(o.Server.Secrets) > 0 {
		fmt.Fprintf(&b, "# The server's secrets are read from the environment (or --env-file): %s\n", strings.Join(o.Server.Secrets, ", "))
	}
	for _, id := range sortedIDs(saved.Skipped) {
		fmt.Fprintf(&b, "# Not saved: %s: %s\n", id, saved.Skipped[id])
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return saved, fmt.Errorf("fuzz: save findings: %w", err)
	}
	if err := enc.Close(); err != nil {
		return saved, fmt.Errorf("fuzz: save findings: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return saved, fmt.Errorf("fuzz: save findings: %w", err)
	}
	return saved, nil
}

func sortedIDs(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// savedDoc is the collection file.
type savedDoc struct {
	Name   string      `yaml:"name"`
	Server any         `yaml:"server"`
	Tests  []savedTest `yaml:"tests"`
}

// savedTest is one test of it.
type savedTest struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description,omitempty"`
	Tags        []string `yaml:"tags,flow"`
	Timeout     string   `yaml:"timeout,omitempty"`
	Call        string   `yaml:"call,omitempty"`
	With        any      `yaml:"with,omitempty"`
	Frame       any      `yaml:"frame,omitempty"`
	ExpectError bool     `yaml:"expectError,omitempty"`
}

// yaml renders the server as a SPEC string or a server mapping.
func (s SavedServer) yaml() any {
	if s.Transport == "" && s.Command == "" && s.URL == "" && len(s.Env) == 0 && len(s.Headers) == 0 && s.Cwd == "" && s.ProtocolVersion == "" {
		return s.Spec
	}
	m := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("transport", s.Transport)
	set("command", s.Command)
	set("cwd", s.Cwd)
	set("url", s.URL)
	set("protocolVersion", s.ProtocolVersion)
	if len(s.Args) > 0 {
		m["args"] = s.Args
	}
	if len(s.Env) > 0 {
		m["env"] = s.Env
	}
	if len(s.Headers) > 0 {
		m["headers"] = s.Headers
	}
	return m
}

// savedTest turns a finding into a test, or says why it cannot.
func (f *Finding) savedTest(rep *Report, n int) (savedTest, string) {
	// What and Detail quote the server (its tool's name, its answer), which must not be a
	// template when the collection is loaded: escaped, as the tool's name is.
	t := savedTest{
		Name:        collection.EscapeTemplate(fmt.Sprintf("%s %s: %s", f.ID, f.Outcome, oneLine(f.What))),
		Description: collection.EscapeTemplate(fmt.Sprintf("mcpspec fuzz, seed %d, case %d (%s/%s): %s", rep.Seed, f.Case, f.Family, f.Kind, oneLine(f.Detail))),
		Tags:        []string{Kind, string(f.Outcome)},
	}
	if f.BeforeInit {
		return t, "found before initialize, which a collection test cannot replay"
	}
	if f.AfterCalls > 0 {
		return t, "it comes with the number of calls, not with a case"
	}
	if f.Tool == "" {
		t.Frame = frameValue(f.Frames[0])
		if len(f.Frames) > 1 {
			return t, "it takes several frames; a frame step sends one"
		}
		return t, ""
	}
	valid, known := mutate.CheckArgs(rep.schemas[f.Tool], f.Args)
	if with, ok := yamlArgs(f.Args); ok && !f.ProgressToken && (known || f.Outcome == AcceptedInvalid) {
		// The server chose the tool's name: it must not be a template on replay.
		t.Call, t.With = collection.EscapeTemplate(f.Tool), with
		t.ExpectError = !valid || f.Outcome == AcceptedInvalid
		return t, ""
	}
	if f.Outcome == AcceptedInvalid {
		return t, "its arguments cannot be written in YAML exactly (or it needs a progress token), and a raw frame accepts any answer"
	}
	meta := rep.meta
	if f.ProgressToken {
		// A call step sends no progress token: the raw frame carries one.
		if meta != nil {
			meta = append(append([]byte(nil), meta...), ',')
		}
		meta = append(meta, `"progressToken":"mcpspec-fuzz"`...)
	}
	t.Frame = frameValue(toolCallFrame(f.Tool, f.Args, meta, SavedID+int64(n)))
	return t, ""
}

// toolCallFrame is the tools/call of a schema finding as one frame, with the stateless era's
// _meta when the server speaks it.
func toolCallFrame(tool string, args json.RawMessage, meta []byte, id int64) []byte {
	name, _ := json.Marshal(tool)
	params := `{"name":` + string(name) + `,"arguments":` + string(args) + `}`
	if meta != nil {
		params = `{"_meta":{` + string(meta) + `},"name":` + string(name) + `,"arguments":` + string(args) + `}`
	}
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":` + params + `}`)
}

// frameValue is a frame as a `frame:` value: text when YAML carries it unchanged, else base64.
func frameValue(b []byte) any {
	if textSafe(b) {
		return string(b)
	}
	return map[string]string{"base64": base64.StdEncoding.EncodeToString(b)}
}

// textSafe reports whether b is text a YAML string holds byte for byte: valid UTF-8 with no
// control character, no line or paragraph separator and no byte order mark.
func textSafe(b []byte) bool {
	if !utf8.Valid(b) || len(b) == 0 {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			return false
		}
	}
	return true
}

// yamlArgs turns tools/call arguments into values YAML and the collection loader carry exactly;
// ok is false when they cannot be (not an object, a number beyond float64, a string the loader
// would read as a template, an unpaired surrogate).
func yamlArgs(args json.RawMessage) (map[string]any, bool) {
	if !mutate.Judge(toolFrame("t", args, false)).Strict {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out, ok := yamlValue(m)
	if !ok {
		return nil, false
	}
	// Load it back the way `mcpspec test` will, and compare.
	var doc bytes.Buffer
	if err := yaml.NewEncoder(&doc).Encode(map[string]any{"server": "testserver", "tests": []any{map[string]any{"name": "x", "call": "t", "with": out}}}); err != nil {
		return nil, false
	}
	c, err := collection.Parse("findings.yaml", doc.Bytes(), nil)
	if err != nil || len(c.Tests) != 1 {
		return nil, false
	}
	call, ok := c.Tests[0].Step.(*collection.ToolCall)
	if !ok {
		return nil, false
	}
	back, err := json.Marshal(call.Input)
	if err != nil || !sameJSON(back, args) {
		return nil, false
	}
	return out.(map[string]any), true
}

// yamlValue converts decoded JSON (numbers as json.Number) into values YAML encodes exactly.
func yamlValue(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := yamlValue(e)
			if !ok || strings.Contains(k, "{{") {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := yamlValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		return f, true
	case string:
		return x, !strings.Contains(x, "{{")
	}
	return v, true
}

// sameJSON reports whether a and b hold the same values, numbers compared exactly.
func sameJSON(a, b []byte) bool {
	ca, okA := canonical(a)
	cb, okB := canonical(b)
	return okA && okB && ca == cb
}

// canonical renders JSON with sorted keys and numbers in one exact notation.
func canonical(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	var sb strings.Builder
	ok := writeCanonical(&sb, v)
	return sb.String(), ok
}

func writeCanonical(sb *strings.Builder, v any) bool {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			sb.Write(kb)
			sb.WriteByte(':')
			if !writeCanonical(sb, x[k]) {
				return false
			}
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteByte(',')
			}
			if !writeCanonical(sb, e) {
				return false
			}
		}
		sb.WriteByte(']')
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 256, big.ToNearestEven)
		if err != nil {
			return false
		}
		sb.WriteString(f.Text('g', -1))
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return false
		}
		sb.Write(b)
	}
	return true
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return strings.ToValidUTF8(s, "�")
}
