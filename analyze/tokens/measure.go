package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/session"
)

// ReportVersion identifies the JSON shape of [Report] (schema/tokens.v1.json).
const ReportVersion = "tokens.v1"

// Report is the token cost of a server's tools.
type Report struct {
	SchemaVersion string   `json:"schemaVersion"`
	Encoding      Encoding `json:"encoding"`
	// Exact is false when some text had to be cut where the tokenizer would not (see
	// [Counter]); the counts may then differ from tiktoken's by a token or two per cut.
	Exact bool `json:"exact"`
	// Note says for which models the counts are exact and that they approximate the others.
	Note string `json:"note"`
	// Tools are sorted heaviest (Full) first, then by name.
	Tools   []ToolCost `json:"tools"`
	Total   Cost       `json:"total"`
	Windows []Window   `json:"windows"`
}

// Cost is what one tool, or all of them, costs in tokens. Name + Description + Schema +
// Structure = Core; Core + Extras = Full.
type Cost struct {
	// Bytes is the size of the compact JSON entry.
	Bytes int `json:"bytes"`
	// Full counts the whole tools/list entry, as compact JSON.
	Full int `json:"full"`
	// Core counts {"name", "description", "inputSchema"}: what a client must forward to a model.
	Core        int `json:"core"`
	Name        int `json:"name"`
	Description int `json:"description"`
	// Schema counts the compact inputSchema.
	Schema int `json:"schema"`
	// Structure is the rest of Core: braces, keys and quotes around the three parts.
	Structure int `json:"structure"`
	// Extras is Full - Core: title, annotations, outputSchema, icons, _meta, execution.
	Extras int `json:"extras"`
}

// ToolCost is the cost of one tool.
type ToolCost struct {
	Tool string `json:"tool"`
	Cost
	// Fields counts each member outside the core, as `"key":value`, heaviest first. They
	// need not add up to Extras: BPE merges across member boundaries.
	Fields []FieldCost `json:"fields,omitempty"`
}

// FieldCost is the cost of one member of a tool entry.
type FieldCost struct {
	Field  string `json:"field"`
	Tokens int    `json:"tokens"`
}

// Window is what share of a context window the tool list takes.
type Window struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	// Full and Core are the percentages of the window that the total Full and Core take.
	Full float64 `json:"fullPercent"`
	Core float64 `json:"corePercent"`
}

// ContextWindows are the windows a Report compares its totals to: 8k and 32k (8,192 and
// 32,768 tokens), 128k (128,000: GPT-4o, GPT-4.1 mini …) and 200k (200,000: Claude).
func ContextWindows() []Window {
	return []Window{{Name: "8k", Tokens: 8192}, {Name: "32k", Tokens: 32768}, {Name: "128k", Tokens: 128000}, {Name: "200k", Tokens: 200000}}
}

// coreKeys are the members of the core, in the order a client sends them.
var coreKeys = []string{"name", "description", "inputSchema"}

// Measure counts the tokens of tools with c.
func Measure(c *Counter, tools []session.Tool) (*Report, error) {
	before := c.ForcedCuts()
	r := &Report{SchemaVersion: ReportVersion, Encoding: c.Encoding(), Note: note(c.Encoding()), Tools: []ToolCost{}}
	for i := range tools {
		tc, err := measureTool(c, &tools[i])
		if err != nil {
			return nil, fmt.Errorf("tokens: tool %q: %w", tools[i].Name, err)
		}
		r.Tools = append(r.Tools, tc)
		r.Total.add(tc.Cost)
	}
	slices.SortStableFunc(r.Tools, func(a, b ToolCost) int {
		if a.Full != b.Full {
			return b.Full - a.Full
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	r.Exact = c.ForcedCuts() == before
	for _, w := range ContextWindows() {
		w.Full = percent(r.Total.Full, w.Tokens)
		w.Core = percent(r.Total.Core, w.Tokens)
		r.Windows = append(r.Windows, w)
	}
	return r, nil
}

// note says how far the counts of enc can be trusted.
func note(enc Encoding) string {
	models := "GPT-4o, GPT-4.1, GPT-5 and the o-series"
	if enc == Cl100kBase {
		models = "GPT-4 and GPT-3.5 Turbo"
	}
	return fmt.Sprintf("exact for %s; approximate for other models (Claude, Gemini, Llama …), whose tokenizers and tool framing differ", models)
}

// percent is part/whole in percent, rounded to two decimals.
func percent(part, whole int) float64 {
	return float64(int64(float64(part)*10000/float64(whole)+0.5)) / 100
}

func (c *Cost) add(o Cost) {
	c.Bytes += o.Bytes
	c.Full += o.Full
	c.Core += o.Core
	c.Name += o.Name
	c.Description += o.Description
	c.Schema += o.Schema
	c.Structure += o.Structure
	c.Extras += o.Extras
}

// member is one member of a JSON object, both parts compact.
type member struct {
	key   string
	raw   []byte // `"key":value`
	value []byte
}

func measureTool(c *Counter, t *session.Tool) (ToolCost, error) {
	raw := t.Raw
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(t); err != nil {
			return ToolCost{}, err
		}
	}
	var full bytes.Buffer
	if err := json.Compact(&full, raw); err != nil {
		return ToolCost{}, fmt.Errorf("compact its entry: %w", err)
	}
	members, err := objectMembers(full.Bytes())
	if err != nil {
		return ToolCost{}, err
	}
	tc := ToolCost{Tool: t.Name}
	tc.Bytes = full.Len()
	count := func(s string) (n int) {
		if err == nil {
			n, err = c.Count(s)
		}
		return n
	}
	tc.Full = count(full.String())
	core := []byte{'{'}
	var extras []member
	for _, m := range members {
		if !slices.Contains(coreKeys, m.key) {
			extras = append(extras, m)
			continue
		}
		if len(core) > 1 {
			core = append(core, ',')
		}
		core = append(core, m.raw...)
	}
	core = append(core, '}')
	tc.Core = count(string(core))
	tc.Name = count(t.Name)
	tc.Description = count(t.Description)
	if s := memberValue(members, "inputSchema"); s != nil {
		tc.Schema = count(string(s))
	}
	tc.Structure = tc.Core - tc.Name - tc.Description - tc.Schema
	tc.Extras = tc.Full - tc.Core
	for _, m := range extras {
		tc.Fields = append(tc.Fields, FieldCost{Field: m.key, Tokens: count(string(m.raw))})
	}
	slices.SortStableFunc(tc.Fields, func(a, b FieldCost) int {
		if a.Tokens != b.Tokens {
			return b.Tokens - a.Tokens
		}
		return strings.Compare(a.Field, b.Field)
	})
	return tc, err
}

func memberValue(ms []member, key string) []byte {
	for _, m := range ms {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// objectMembers splits a compact JSON object into its members, in order, each as it appears
// in the text.
func objectMembers(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("its entry is not a JSON object")
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		if obj[start] == ',' {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("its entry: %w", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("its entry's %q: %w", key, err)
		}
		end := dec.InputOffset()
		out = append(out, member{key: key, raw: obj[start:end], value: v})
	}
	return out, nil
}
