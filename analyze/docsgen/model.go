package docsgen

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/session"
)

// Options adds what the inventory does not hold. Nil means none.
type Options struct {
	// Tokens, when set, adds each tool's token cost.
	Tokens *tokens.Report
	// Flags, when set, lists findings per tool name (for example an audit's), shown as
	// warnings under the tool.
	Flags map[string][]string
}

// page is what both renderings show.
type page struct {
	Title        string
	Server       session.Implementation
	Protocol     string
	Instructions string
	Tools        []toolView
	Prompts      []promptView
	Resources    []session.Resource
	Templates    []session.ResourceTemplate
	Tokens       *tokens.Report
}

type toolView struct {
	Name, Title, Description string
	Badges                   []string
	Params                   []param
	// SchemaNote explains an input schema the table cannot show ("" when all is shown).
	SchemaNote string
	// InputSchema is the whole input schema, shown when SchemaNote says the table falls short.
	InputSchema  string
	OutputSchema string
	Example      string
	Cost         *tokens.ToolCost
	Flags        []string
}

type promptView struct {
	Name, Title, Description string
	Arguments                []session.PromptArgument
}

func buildPage(inv *inventory.Inventory, opts *Options) *page {
	if opts == nil {
		opts = &Options{}
	}
	p := &page{
		Server:       inv.ServerInfo,
		Protocol:     inv.ProtocolVersion,
		Instructions: strings.TrimSpace(inv.Instructions),
		Tokens:       opts.Tokens,
	}
	p.Title = firstNonEmpty(inv.ServerInfo.Title, inv.ServerInfo.Name, "MCP server")
	costs := map[string]*tokens.ToolCost{}
	if opts.Tokens != nil {
		for i := range opts.Tokens.Tools {
			costs[opts.Tokens.Tools[i].Tool] = &opts.Tokens.Tools[i]
		}
	}
	for _, t := range inv.Tools {
		v := toolView{Name: t.Name, Title: t.Title, Description: strings.TrimSpace(t.Description), Cost: costs[t.Name], Flags: opts.Flags[t.Name]}
		v.Badges = badges(t.Annotations, t.Execution)
		v.Params, v.SchemaNote = params(t.InputSchema)
		if v.SchemaNote != "" {
			v.InputSchema = canonicalJSON(t.InputSchema)
		}
		v.OutputSchema = canonicalJSON(t.OutputSchema)
		v.Example = exampleCall(t.Name, t.InputSchema)
		p.Tools = append(p.Tools, v)
	}
	slices.SortStableFunc(p.Tools, func(a, b toolView) int { return strings.Compare(a.Name, b.Name) })
	for _, pr := range inv.Prompts {
		args := slices.Clone(pr.Arguments)
		p.Prompts = append(p.Prompts, promptView{Name: pr.Name, Title: pr.Title, Description: strings.TrimSpace(pr.Description), Arguments: args})
	}
	slices.SortStableFunc(p.Prompts, func(a, b promptView) int { return strings.Compare(a.Name, b.Name) })
	p.Resources = slices.Clone(inv.Resources)
	slices.SortStableFunc(p.Resources, func(a, b session.Resource) int { return strings.Compare(a.URI, b.URI) })
	p.Templates = slices.Clone(inv.Templates)
	slices.SortStableFunc(p.Templates, func(a, b session.ResourceTemplate) int { return strings.Compare(a.URITemplate, b.URITemplate) })
	return p
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return strings.TrimSpace(x)
		}
	}
	return ""
}

// badges renders the tool annotations (2025-03-26) and task support (2025-11-25) as short
// labels. Only hints the server set are shown: an absent hint is not a claim.
func badges(annotations json.RawMessage, exec *session.ToolExecution) []string {
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		Idempotent  *bool `json:"idempotentHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	}
	_ = json.Unmarshal(annotations, &a)
	var out []string
	flag := func(v *bool, yes, no string) {
		if v == nil {
			return
		}
		if *v {
			out = append(out, yes)
		} else if no != "" {
			out = append(out, no)
		}
	}
	flag(a.ReadOnly, "read-only", "writes")
	flag(a.Destructive, "destructive", "non-destructive")
	flag(a.Idempotent, "idempotent", "")
	flag(a.OpenWorld, "open world", "closed world")
	if exec != nil && exec.TaskSupport != "" && exec.TaskSupport != session.TaskSupportForbidden {
		out = append(out, "task "+exec.TaskSupport)
	}
	return out
}

// canonicalJSON indents raw with sorted keys, or returns "" for nothing.
func canonicalJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return marshalIndent(v)
}

// marshalIndent is json.MarshalIndent without HTML escaping (the renderers escape).
func marshalIndent(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}
