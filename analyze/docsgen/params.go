package docsgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// param is one row of a tool's parameter table.
type param struct {
	Name        string
	Type        string
	Required    bool
	Default     string
	Enum        string
	Constraints string
	Description string
}

// schema is the part of a JSON Schema the docs read.
type schema struct {
	Type                 any                `json:"type"`
	Description          string             `json:"description"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	Const                *any               `json:"const"`
	Default              *any               `json:"default"`
	Examples             []any              `json:"examples"`
	Format               string             `json:"format"`
	Pattern              string             `json:"pattern"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	ExclusiveMinimum     any                `json:"exclusiveMinimum"`
	ExclusiveMaximum     any                `json:"exclusiveMaximum"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	UniqueItems          bool               `json:"uniqueItems"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	AllOf                []*schema          `json:"allOf"`
	Ref                  string             `json:"$ref"`
	Defs                 map[string]*schema `json:"$defs"`
	Definitions          map[string]*schema `json:"definitions"`
	AdditionalProperties any                `json:"additionalProperties"`
}

// maxDepth bounds how deep nested object parameters are listed and examples are built.
const maxDepth = 4

// params lists the parameters of an input schema, nested object properties as dotted names,
// each level sorted by name. note explains what the table cannot show.
func params(raw json.RawMessage) ([]param, string) {
	if len(raw) == 0 {
		return nil, "The tool has no input schema."
	}
	var root schema
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, "The input schema is not a JSON Schema object: " + err.Error() + "."
	}
	var out []param
	var walk func(prefix string, s *schema, depth int)
	walk = func(prefix string, s *schema, depth int) {
		s = resolve(&root, s, 0)
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			orig := s.Properties[n]
			p := resolve(&root, orig, 0)
			if p == nil {
				p = &schema{}
			}
			desc := p.Description
			if orig != nil && orig.Description != "" {
				desc = orig.Description // a description beside a $ref wins
			}
			out = append(out, param{
				Name:        prefix + n,
				Type:        typeOf(&root, p),
				Required:    slices.Contains(s.Required, n),
				Default:     jsonText(p.Default),
				Enum:        enumText(p),
				Constraints: constraints(p),
				Description: strings.TrimSpace(desc),
			})
			if depth < maxDepth && len(p.Properties) > 0 {
				walk(prefix+n+".", p, depth+1)
			}
		}
	}
	walk("", &root, 0)
	var notes []string
	if t := typeOf(&root, &root); t != "object" && t != "" {
		notes = append(notes, fmt.Sprintf("The input schema's type is %s, not object.", t))
	}
	if len(root.AnyOf)+len(root.OneOf)+len(root.AllOf) > 0 {
		notes = append(notes, "The input schema combines schemas (anyOf, oneOf or allOf): see it in full below.")
	}
	return out, strings.Join(notes, " ")
}

// resolve follows a local $ref ("#/$defs/x", "#/definitions/x") up to a few hops; other
// references are left as they are.
func resolve(root, s *schema, hops int) *schema {
	if s == nil || s.Ref == "" || hops > 8 {
		return s
	}
	name, ok := strings.CutPrefix(s.Ref, "#/$defs/")
	defs := root.Defs
	if !ok {
		if name, ok = strings.CutPrefix(s.Ref, "#/definitions/"); !ok {
			return s
		}
		defs = root.Definitions
	}
	if d := defs[name]; d != nil {
		return resolve(root, d, hops+1)
	}
	return s
}

// typeOf names a schema's type: "string", "integer | null", "array of string", "object".
func typeOf(root, s *schema) string {
	s = resolve(root, s, 0)
	if s == nil {
		return ""
	}
	if s.Ref != "" {
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	}
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				types = append(types, str)
			}
		}
	}
	if len(types) == 0 {
		for _, branch := range append(slices.Clone(s.AnyOf), s.OneOf...) {
			if bt := typeOf(root, branch); bt != "" && !slices.Contains(types, bt) {
				types = append(types, bt)
			}
		}
	}
	if len(types) == 0 {
		switch {
		case s.Const != nil:
			return "const"
		case len(s.Enum) > 0:
			return "enum"
		case len(s.Properties) > 0:
			return "object"
		}
		return "any"
	}
	for i, t := range types {
		if t == "array" && s.Items != nil {
			if it := typeOf(root, s.Items); it != "" && it != "any" {
				types[i] = "array of " + it
			}
		}
	}
	return strings.Join(types, " | ")
}

func enumText(s *schema) string {
	if s.Const != nil {
		return jsonText(s.Const)
	}
	var vals []string
	for _, v := range s.Enum {
		vals = append(vals, jsonText(&v))
	}
	return strings.Join(vals, ", ")
}

// constraints renders the validation keywords: ≥ 1, ≤ 10, length 1–64, pattern, format, items.
func constraints(s *schema) string {
	var c []string
	num := func(f float64) string { return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%f", f), "0"), ".") }
	if s.Minimum != nil {
		c = append(c, "≥ "+num(*s.Minimum))
	}
	if v, ok := s.ExclusiveMinimum.(float64); ok {
		c = append(c, "> "+num(v))
	}
	if s.Maximum != nil {
		c = append(c, "≤ "+num(*s.Maximum))
	}
	if v, ok := s.ExclusiveMaximum.(float64); ok {
		c = append(c, "< "+num(v))
	}
	if r := rangeText(s.MinLength, s.MaxLength); r != "" {
		c = append(c, "length "+r)
	}
	if r := rangeText(s.MinItems, s.MaxItems); r != "" {
		c = append(c, "items "+r)
	}
	if s.UniqueItems {
		c = append(c, "unique items")
	}
	if s.Format != "" {
		c = append(c, "format "+s.Format)
	}
	if s.Pattern != "" {
		c = append(c, "pattern "+s.Pattern)
	}
	return strings.Join(c, "; ")
}

func rangeText(lo, hi *int) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d–%d", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("≥ %d", *lo)
	case hi != nil:
		return fmt.Sprintf("≤ %d", *hi)
	}
	return ""
}

// jsonText is v as compact JSON with sorted keys, "" for nil.
func jsonText(v *any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(*v)
	if err != nil {
		return ""
	}
	return string(b)
}
