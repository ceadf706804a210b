package audit

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/assert"
)

// toolNameRE is the 2025-11-25 tool-name rule: 1–128 characters of A–Z a–z 0–9 _ - .
var toolNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

// conformanceFindings checks names, uniqueness and schemas.
func conformanceFindings(ctx context.Context, its []*item) ([]Finding, error) {
	var out []Finding
	seen := map[Kind]map[string]bool{}
	for _, it := range its {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if it.subject.Kind == KindInstructions {
			continue
		}
		if it.bad != nil {
			r, _ := RuleByID(RuleSchemaInvalid)
			out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: it.subject, Fix: "Send each list entry as a JSON object.",
				Message: fmt.Sprintf("the %s entry #%d is not a JSON object: %v", it.subject.Kind, it.index, it.bad)})
			continue
		}
		if seen[it.subject.Kind] == nil {
			seen[it.subject.Kind] = map[string]bool{}
		}
		if n := it.subject.Name; seen[it.subject.Kind][n] && !strings.HasPrefix(n, "#") {
			r, _ := RuleByID(RuleDuplicate)
			out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: it.subject, Fix: r.Fix,
				Message: fmt.Sprintf("another %s is also named %q", it.subject.Kind, n)})
		}
		seen[it.subject.Kind][it.subject.Name] = true
		if it.subject.Kind != KindTool {
			continue
		}
		name, isString := it.obj()["name"].(string)
		if !isString || !toolNameRE().MatchString(name) {
			r, _ := RuleByID(RuleToolName)
			f := Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: it.subject, Fix: r.Fix}
			switch {
			case !isString:
				f.Message = "the tool has no string name"
			case len(name) > 128:
				f.Message = fmt.Sprintf("the name is %d bytes long (at most 128)", len(name))
			default:
				bad := toolNameRE().ReplaceAllString(name, "")
				for i, r := range name {
					if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", r) {
						bad = string(r)
						f.Evidence = evidence("/name", name, i, i+len(string(r)), "")
						break
					}
				}
				f.Message = fmt.Sprintf("the name contains %q, outside A–Z a–z 0–9 _ - .", visible(bad))
			}
			out = append(out, f)
		}
		out = append(out, schemaFindings(it, "inputSchema", true)...)
		if f := undocumented(it); f != nil {
			out = append(out, *f)
		}
		out = append(out, schemaFindings(it, "outputSchema", false)...)
	}
	return out, nil
}

// schemaFindings checks one schema of a tool: present when required, an object schema, it
// compiles (offline), and its required names are properties.
func schemaFindings(it *item, key string, mandatory bool) []Finding {
	v, ok := it.obj()[key]
	rs, _ := RuleByID(RuleSchemaInvalid)
	bad := func(msg string, conf Confidence, sev Severity) Finding {
		return Finding{RuleID: rs.ID, Severity: sev, Confidence: conf, Subject: it.subject, Fix: rs.Fix, Message: msg,
			Evidence: &Evidence{Pointer: "/" + key, Excerpt: clip(visible(compactJSON(v)), 200)}}
	}
	if !ok {
		if mandatory {
			return []Finding{bad("the tool has no inputSchema", Certain, rs.Severity)}
		}
		return nil
	}
	obj, isObj := v.(map[string]any)
	if !isObj {
		return []Finding{bad(fmt.Sprintf("%s is not a JSON object", key), Certain, rs.Severity)}
	}
	if t, _ := obj["type"].(string); t != "object" {
		return []Finding{bad(fmt.Sprintf("%s has type %q; MCP requires type: object", key, t), Certain, rs.Severity)}
	}
	var out []Finding
	if _, err := assert.CompileSchema(obj); err != nil {
		msg := fmt.Sprintf("%s does not compile: %s", key, schemaReason(err))
		if strings.Contains(err.Error(), "external schema reference") {
			// Not provably wrong, only not checkable offline.
			out = append(out, bad(msg+" (remote references are never fetched)", Tentative, Low))
		} else {
			out = append(out, bad(msg, Certain, rs.Severity))
		}
	}
	out = append(out, requiredFindings(it, "/"+key, obj)...)
	return out
}

// requiredFindings reports required names missing from properties, in the top-level object
// schema and in nested object schemas under properties.
func requiredFindings(it *item, ptr string, obj map[string]any) []Finding {
	var out []Finding
	req, _ := obj["required"].([]any)
	props, _ := obj["properties"].(map[string]any)
	_, hasAdditional := obj["additionalProperties"].(map[string]any)
	_, hasPattern := obj["patternProperties"]
	for i, r := range req {
		name, ok := r.(string)
		if !ok || hasAdditional || hasPattern {
			continue
		}
		if _, ok := props[name]; !ok {
			rr, _ := RuleByID(RuleRequired)
			out = append(out, Finding{RuleID: rr.ID, Severity: rr.Severity, Confidence: Certain, Subject: it.subject, Fix: rr.Fix,
				Message:  fmt.Sprintf("%s/required lists %q, which is not in properties", ptr, name),
				Evidence: evidence(fmt.Sprintf("%s/required/%d", ptr, i), name, 0, len(name), "")})
		}
	}
	for k, p := range props {
		if po, ok := p.(map[string]any); ok {
			out = append(out, requiredFindings(it, ptr+"/properties/"+escapePointer(k), po)...)
		}
	}
	return out
}

// oneLine joins the lines of s with "; ".
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// schemaReason keeps the most specific line of a schema compile error.
func schemaReason(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimLeft(strings.TrimSpace(lines[i]), "- ")
		if strings.HasPrefix(l, "at '") && !strings.Contains(l, "failed") {
			return l
		}
	}
	return oneLine(err.Error())
}

// undocumented reports a tool with no description whose input schema is an object schema that
// names no property and does not close itself ({"type":"object"}): nothing tells a model what
// the tool does or what it takes.
func undocumented(it *item) *Finding {
	if strings.TrimSpace(it.str("description")) != "" {
		return nil
	}
	obj, ok := it.obj()["inputSchema"].(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil // schema-invalid reports it
	}
	if props, _ := obj["properties"].(map[string]any); len(props) > 0 {
		return nil
	}
	for _, k := range []string{"patternProperties", "oneOf", "anyOf", "allOf", "$ref"} {
		if _, ok := obj[k]; ok {
			return nil
		}
	}
	if obj["additionalProperties"] == false || obj["unevaluatedProperties"] == false {
		return nil
	}
	r, _ := RuleByID(RuleUndocumented)
	return &Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: it.subject, Fix: r.Fix,
		Message:  "the tool has no description and its inputSchema names no property and closes nothing",
		Evidence: &Evidence{Pointer: "/inputSchema", Excerpt: clip(visible(compactJSON(obj)), 200)}}
}
