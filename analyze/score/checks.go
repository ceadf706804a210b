package score

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/session"
)

// Points of each check (100 in all).
const (
	pDescription     = 8
	pParamDesc       = 5
	pParamType       = 4
	pTitle           = 2
	pAnnotations     = 4
	pOutputSchema    = 2
	pMeanCore        = 10
	pHeaviestCore    = 5
	pHandshake       = 3
	pCapabilities    = 3
	pPagination      = 3
	pUnknownTool     = 5
	pInvalidArgs     = 6
	pDistinct        = 6
	pRetrieval       = 4
	meanCoreFull     = 150 // core tokens per tool at or below which all points are earned
	meanCoreZero     = 600
	heaviestCoreFull = 500
	heaviestCoreZero = 2000
	nearDuplicate    = 0.8 // Jaccard similarity of description terms
)

// stopwords are left out when judging whether a description says more than the name.
var stopwords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "and": true, "or": true,
	"for": true, "in": true, "on": true, "with": true, "this": true, "tool": true, "is": true, "it": true, "by": true}

func metadataChecks(in *Input) []Check {
	tools := toolsOf(in)
	if len(tools) == 0 {
		reason := "the server lists no tools"
		return []Check{
			notApplicable("metadata.description", Metadata, pDescription, reason),
			notApplicable("metadata.parameter-descriptions", Metadata, pParamDesc, reason),
			notApplicable("metadata.parameter-types", Metadata, pParamType, reason),
			notApplicable("metadata.titles", Metadata, pTitle, reason),
			notApplicable("metadata.annotations", Metadata, pAnnotations, reason),
			notApplicable("metadata.output-schemas", Metadata, pOutputSchema, reason),
		}
	}
	var out []Check
	var vague []string
	good := 0
	for _, t := range tools {
		if saysMore(t.Name, t.Description) {
			good++
		} else {
			vague = append(vague, t.Name)
		}
	}
	out = append(out, fraction("metadata.description", Metadata, pDescription, good, len(tools), "tools have a description that says more than the name", vague))

	params, described, typed := 0, 0, 0
	var undescribed, untyped []string
	for _, t := range tools {
		for _, p := range topProperties(t.InputSchema) {
			params++
			if strings.TrimSpace(p.schema.Description) != "" {
				described++
			} else {
				undescribed = append(undescribed, t.Name+"."+p.name)
			}
			if p.schema.typed() {
				typed++
			} else {
				untyped = append(untyped, t.Name+"."+p.name)
			}
		}
	}
	if params == 0 {
		out = append(out,
			notApplicable("metadata.parameter-descriptions", Metadata, pParamDesc, "no tool takes parameters"),
			notApplicable("metadata.parameter-types", Metadata, pParamType, "no tool takes parameters"))
	} else {
		out = append(out,
			fraction("metadata.parameter-descriptions", Metadata, pParamDesc, described, params, "parameters have a description", undescribed),
			fraction("metadata.parameter-types", Metadata, pParamType, typed, params, "parameters declare a type", untyped))
	}

	v := negotiated(in)
	if versionAtLeast(v, session.Version20250618) {
		var missing []string
		n := 0
		for _, t := range tools {
			if t.Title != "" || annotationTitle(t.Annotations) != "" {
				n++
			} else {
				missing = append(missing, t.Name)
			}
		}
		out = append(out, fraction("metadata.titles", Metadata, pTitle, n, len(tools), "tools have a title", missing))
	} else {
		out = append(out, notApplicable("metadata.titles", Metadata, pTitle, "tool titles exist from protocol 2025-06-18; negotiated "+v))
	}
	if versionAtLeast(v, session.Version20250326) {
		var missing []string
		n := 0
		for _, t := range tools {
			if hasBehaviourHint(t.Annotations) {
				n++
			} else {
				missing = append(missing, t.Name)
			}
		}
		out = append(out, fraction("metadata.annotations", Metadata, pAnnotations, n, len(tools), "tools declare readOnlyHint or destructiveHint", missing))
	} else {
		out = append(out, notApplicable("metadata.annotations", Metadata, pAnnotations, "tool annotations exist from protocol 2025-03-26; negotiated "+v))
	}
	if versionAtLeast(v, session.Version20250618) {
		var missing []string
		n := 0
		for _, t := range tools {
			if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
				n++
			} else {
				missing = append(missing, t.Name)
			}
		}
		out = append(out, fraction("metadata.output-schemas", Metadata, pOutputSchema, n, len(tools), "tools declare an output schema", missing))
	} else {
		out = append(out, notApplicable("metadata.output-schemas", Metadata, pOutputSchema, "output schemas exist from protocol 2025-06-18; negotiated "+v))
	}
	return out
}

// saysMore reports whether a description adds at least two words (not stopwords) to the
// tool's name.
func saysMore(name, desc string) bool {
	nameTerms := map[string]bool{}
	for _, t := range retrieval.Terms(name) {
		nameTerms[t] = true
	}
	extra := map[string]bool{}
	for _, t := range retrieval.Terms(desc) {
		if !nameTerms[t] && !stopwords[t] {
			extra[t] = true
		}
	}
	return len(extra) >= 2
}

type namedSchema struct {
	name   string
	schema propSchema
}

type propSchema struct {
	Type        any             `json:"type"`
	Description string          `json:"description"`
	Enum        json.RawMessage `json:"enum"`
	Const       json.RawMessage `json:"const"`
	Ref         string          `json:"$ref"`
	AnyOf       json.RawMessage `json:"anyOf"`
	OneOf       json.RawMessage `json:"oneOf"`
	AllOf       json.RawMessage `json:"allOf"`
}

// typed reports whether a property says what it accepts.
func (p propSchema) typed() bool {
	return p.Type != nil || len(p.Enum) > 0 || len(p.Const) > 0 || p.Ref != "" || len(p.AnyOf) > 0 || len(p.OneOf) > 0 || len(p.AllOf) > 0
}

// topProperties returns an input schema's top-level properties, sorted by name.
func topProperties(raw json.RawMessage) []namedSchema {
	var s struct {
		Properties map[string]propSchema `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []namedSchema
	for n, p := range s.Properties {
		out = append(out, namedSchema{n, p})
	}
	slices.SortFunc(out, func(a, b namedSchema) int { return strings.Compare(a.name, b.name) })
	return out
}

func annotationTitle(raw json.RawMessage) string {
	var a struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(raw, &a)
	return a.Title
}

func hasBehaviourHint(raw json.RawMessage) bool {
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	_ = json.Unmarshal(raw, &a)
	return a.ReadOnly != nil || a.Destructive != nil
}

// ramp is 1 at or below full, 0 at or above zero, linear between.
func ramp(v, full, zero float64) float64 {
	switch {
	case v <= full:
		return 1
	case v >= zero:
		return 0
	}
	return (zero - v) / (zero - full)
}

func tokenChecks(in *Input) []Check {
	if in.Tokens == nil || len(in.Tokens.Tools) == 0 {
		reason := "the server lists no tools"
		if in.Tokens == nil {
			reason = "no token report"
		}
		return []Check{notApplicable("tokens.mean-core", Tokens, pMeanCore, reason), notApplicable("tokens.heaviest-core", Tokens, pHeaviestCore, reason)}
	}
	r := in.Tokens
	mean := float64(r.Total.Core) / float64(len(r.Tools))
	heaviest := r.Tools[0]
	for _, t := range r.Tools {
		if t.Core > heaviest.Core {
			heaviest = t
		}
	}
	c1 := Check{ID: "tokens.mean-core", Category: Tokens, Applies: true, Possible: pMeanCore,
		Earned: pMeanCore * ramp(mean, meanCoreFull, meanCoreZero),
		Reason: fmt.Sprintf("%s core %s tokens per tool on average (all points at ≤ %d, none at ≥ %d)", trim(mean), r.Encoding, meanCoreFull, meanCoreZero)}
	c2 := Check{ID: "tokens.heaviest-core", Category: Tokens, Applies: true, Possible: pHeaviestCore,
		Earned: pHeaviestCore * ramp(float64(heaviest.Core), heaviestCoreFull, heaviestCoreZero),
		Reason: fmt.Sprintf("the heaviest tool, %s, takes %d core tokens (all points at ≤ %d, none at ≥ %d)", heaviest.Tool, heaviest.Core, heaviestCoreFull, heaviestCoreZero)}
	return []Check{c1, c2}
}

func discoveryChecks(in *Input) []Check {
	var out []Check
	tools := toolsOf(in)
	if len(tools) < 2 {
		out = append(out, notApplicable("discoverability.distinct-descriptions", Discovery, pDistinct, "fewer than two tools"))
	} else {
		pairs, involved := nearDuplicates(tools)
		var names []string
		for _, t := range tools {
			if !involved[t.Name] {
				continue
			}
			names = append(names, t.Name)
		}
		c := fraction("discoverability.distinct-descriptions", Discovery, pDistinct, len(tools)-len(names), len(tools), "tools have a description no other tool nearly repeats", nil)
		c.Items = pairs
		out = append(out, c)
	}
	if in.Retrieval == nil {
		out = append(out, notApplicable("discoverability.retrieval", Discovery, pRetrieval, "no golden set (--golden)"))
	} else {
		m := in.Retrieval.Metrics
		r5 := m.RecallAt[5]
		c := Check{ID: "discoverability.retrieval", Category: Discovery, Applies: true, Possible: pRetrieval,
			Earned: 2*r5 + m.MRR + m.NDCGAt10,
			Reason: fmt.Sprintf("%s over %d queries: 2 × Recall@5 %s + MRR %s + nDCG@10 %s", in.Retrieval.Search, in.Retrieval.Queries, trim(r5), trim(m.MRR), trim(m.NDCGAt10))}
		out = append(out, c)
	}
	return out
}

// nearDuplicates finds pairs of tools whose descriptions share at least nearDuplicate of their
// terms (Jaccard), among descriptions of three terms or more.
func nearDuplicates(tools []session.Tool) (pairs []string, involved map[string]bool) {
	involved = map[string]bool{}
	sets := make([]map[string]bool, len(tools))
	for i, t := range tools {
		sets[i] = map[string]bool{}
		for _, term := range retrieval.Terms(t.Description) {
			sets[i][term] = true
		}
	}
	for i := range tools {
		for j := i + 1; j < len(tools); j++ {
			if len(sets[i]) < 3 || len(sets[j]) < 3 {
				continue
			}
			inter := 0
			for t := range sets[i] {
				if sets[j][t] {
					inter++
				}
			}
			union := len(sets[i]) + len(sets[j]) - inter
			if sim := float64(inter) / float64(union); sim >= nearDuplicate {
				a, b := tools[i].Name, tools[j].Name
				if b < a {
					a, b = b, a
				}
				pairs = append(pairs, fmt.Sprintf("%s ~ %s (%.0f%% of terms shared)", a, b, sim*100))
				involved[a], involved[b] = true, true
			}
		}
	}
	slices.Sort(pairs)
	return pairs, involved
}
