package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// item is one entry of the metadata (a tool, prompt, resource, template, or the instructions)
// decoded for the rules.
type item struct {
	subject Subject
	// value is the decoded entry (numbers kept as json.Number); a string for instructions.
	value any
	// raw is the entry as the server sent it (nil for instructions).
	raw json.RawMessage
	// index is the entry's position in its list.
	index int
	// bad is set when the entry does not decode as a JSON object.
	bad error
}

// obj returns the entry as an object (nil when it is not one).
func (it *item) obj() map[string]any {
	m, _ := it.value.(map[string]any)
	return m
}

// str returns the string member k of the entry, "" when absent or not a string.
func (it *item) str(k string) string {
	s, _ := it.obj()[k].(string)
	return s
}

// decodeJSON decodes raw keeping numbers as written.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// items decodes every entry of m, instructions first, then tools, prompts, resources and
// templates in the order the server listed them.
func items(m *Metadata) []*item {
	var out []*item
	if m.Instructions != "" {
		out = append(out, &item{subject: Subject{Server: m.Name, Kind: KindInstructions}, value: m.Instructions})
	}
	add := func(kind Kind, nameKey string, list []json.RawMessage) {
		for i, raw := range list {
			it := &item{subject: Subject{Server: m.Name, Kind: kind}, raw: raw, index: i}
			v, err := decodeJSON(raw)
			switch {
			case err != nil:
				it.bad = err
			default:
				if _, ok := v.(map[string]any); !ok {
					it.bad = fmt.Errorf("not a JSON object")
				}
			}
			it.value = v
			it.subject.Name = it.str(nameKey)
			if it.subject.Name == "" {
				it.subject.Name = fmt.Sprintf("#%d", i)
			}
			out = append(out, it)
		}
	}
	add(KindTool, "name", m.Tools)
	add(KindPrompt, "name", m.Prompts)
	add(KindResource, "uri", m.Resources)
	add(KindTemplate, "uriTemplate", m.ResourceTemplates)
	return out
}

// text is one string found in an entry: a value or an object key.
type text struct {
	// pointer is the JSON pointer of the string (for a key: of the member it names).
	pointer string
	s       string
	key     bool
	// schema is set for strings inside inputSchema or outputSchema.
	schema bool
	// context is extra text the string is read with: a schema property's name for its
	// description.
	context string
}

// texts returns every string of the entry — keys and values, depth first, keys sorted — with
// its JSON pointer.
func (it *item) texts() []text {
	var out []text
	var walk func(v any, ptr string, schema bool, context string)
	walk = func(v any, ptr string, schema bool, context string) {
		switch x := v.(type) {
		case string:
			out = append(out, text{pointer: ptr, s: x, schema: schema, context: context})
		case []any:
			for i, e := range x {
				walk(e, ptr+"/"+strconv.Itoa(i), schema, context)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			parentIsProps := strings.HasSuffix(ptr, "/properties") || strings.HasSuffix(ptr, "/patternProperties")
			for _, k := range keys {
				p := ptr + "/" + escapePointer(k)
				inSchema := schema || (ptr == "" && (k == "inputSchema" || k == "outputSchema"))
				out = append(out, text{pointer: p, s: k, key: true, schema: inSchema && parentIsProps})
				ctx := context
				if inSchema && parentIsProps {
					ctx = k
				}
				walk(x[k], p, inSchema, ctx)
			}
		}
	}
	walk(it.value, "", false, "")
	return out
}

// escapePointer escapes a JSON pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// at returns the value at a JSON pointer of v (only the forms [item.texts] produces).
func at(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			e, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// compactJSON encodes a decoded value back to JSON (keys sorted), "" when it cannot.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
