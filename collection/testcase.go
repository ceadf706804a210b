package collection

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
)

// testKeys are the keys a test may have.
var testKeys = []string{"id", "name", "description", "tags", "server", "timeout", "retries", "skip", "dependsOn",
	"type", "call", "tool", "with", "input", "read", "prompt", "arguments", "list", "complete", "request", "frame",
	"expect", "assertions", "expectError", "extract", "client", "notifications", "requests"}

// stepKeys name the step of a test, with the kind each gives.
var stepKeys = []struct{ key, kind string }{
	{"call", assert.KindTool}, {"tool", assert.KindTool}, {"read", assert.KindRead}, {"prompt", assert.KindPrompt},
	{"list", assert.KindList}, {"complete", assert.KindComplete}, {"request", assert.KindRequest}, {"frame", assert.KindRequest},
}

// stepTypes maps `type:` values to kinds.
var stepTypes = map[string]string{
	"tool": assert.KindTool, "read": assert.KindRead, "resource": assert.KindRead, "prompt": assert.KindPrompt,
	"list": assert.KindList, "complete": assert.KindComplete, "request": assert.KindRequest, "frame": assert.KindRequest,
}

// listKinds are the accepted `list:` values.
var listKinds = []string{"tools", "resources", "prompts", "templates"}

// idRE is what an explicit test id may look like.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]*$`) })

// varNameRE is what an extracted variable may be called.
var varNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_\-]*$`) })

// decodeTests reads the tests list.
func (d *decoder) decodeTests(n *yaml.Node, c *Collection) {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "tests must be a list, got %s", kindName(n))
		return
	}
	if len(n.Content) > d.maxTests {
		d.errf(n, "split the collection into several files", "too many tests: %d (the limit is %d)", len(n.Content), d.maxTests)
		return
	}
	if len(n.Content) == 0 {
		d.errf(n, "", "tests must not be empty")
	}
	for i, tn := range n.Content {
		d.test = i
		t := d.decodeTest(tn, i, c)
		c.Tests = append(c.Tests, t)
	}
	d.test = -1
}

// slugRE matches runs of characters not allowed in a derived id.
var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// slug derives an id from a test name: "Get user #1" → "get-user-1".
func slug(name string) string {
	s := strings.Trim(slugRE().ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 64 {
		s = strings.Trim(s[:64], "-")
	}
	return s
}

// decodeTest reads one test; it always returns a test (partial on errors) so indexes line up.
func (d *decoder) decodeTest(n *yaml.Node, index int, c *Collection) *Test {
	t := &Test{Pos: d.pos(n), Retries: c.Defaults.Retries}
	what := fmt.Sprintf("test #%d", index+1)
	if n.Kind == yaml.MappingNode {
		// Name the test in messages as soon as we can.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "id" && n.Content[i+1].Kind == yaml.ScalarNode && what == fmt.Sprintf("test #%d", index+1) {
				what = fmt.Sprintf("test %q", n.Content[i+1].Value)
			}
			if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
				what = fmt.Sprintf("test %q", n.Content[i+1].Value)
			}
		}
	}
	fs, ok := d.fields(n, what, testKeys)
	if !ok {
		return t
	}
	if f, ok := fs["name"]; ok {
		t.Name, _ = d.nonEmpty(f.val, what+" name")
	}
	if f, ok := fs["id"]; ok {
		if id, ok := d.nonEmpty(f.val, what+" id"); ok {
			if !idRE().MatchString(id) {
				d.errf(f.val, "use letters, digits, '-', '_' and '.'", "%s: invalid id %q", what, id)
			}
			t.ID, t.idGiven = id, true
		}
	}
	if t.Name == "" && t.ID == "" {
		d.errf(n, `add "name:"`, "%s has no name or id", what)
	}
	if t.Name == "" {
		t.Name = t.ID
	}
	if f, ok := fs["description"]; ok {
		t.Description, _ = d.str(f.val, what+" description")
	}
	t.Tags = append(t.Tags, c.Defaults.Tags...)
	if f, ok := fs["tags"]; ok {
		tags, _ := d.strList(f.val, what+" tags")
		for _, tag := range tags {
			if !has(t.Tags, tag) {
				t.Tags = append(t.Tags, tag)
			}
		}
	}
	if f, ok := fs["server"]; ok {
		if s, ok := d.nonEmpty(f.val, what+" server"); ok {
			t.Server = s
			if _, exists := c.Servers[s]; !exists {
				d.errf(f.val, suggest(s, slices.Sorted(maps.Keys(c.Servers))), "%s: server %q is not defined", what, s)
			}
		}
	}
	if f, ok := fs["timeout"]; ok {
		t.Timeout, _ = d.duration(f.val, what+" timeout")
	}
	if f, ok := fs["retries"]; ok {
		r, _ := d.integer(f.val, what+" retries", 0, MaxRetries)
		t.Retries = int(r)
	}
	if f, ok := fs["skip"]; ok {
		switch {
		case f.val.Kind == yaml.ScalarNode && f.val.Tag == "!!bool":
			if b, _ := d.boolean(f.val, what+" skip"); b {
				t.Skip = "skipped in the collection"
			}
		default:
			t.Skip, _ = d.nonEmpty(f.val, what+" skip (true or a reason)")
		}
	}
	if f, ok := fs["dependsOn"]; ok {
		t.DependsOn, _ = d.strList(f.val, what+" dependsOn")
	}
	t.Step = d.decodeStep(n, fs, what)
	if f, ok := fs["expectError"]; ok {
		t.ExpectError = d.decodeExpectError(f.val, what)
	}
	// The id is needed by snapshot names: derive it before the assertions.
	if t.ID == "" {
		t.ID = slug(t.Name)
		if t.ID == "" {
			t.ID = fmt.Sprintf("test-%d", index+1)
		}
	}
	for _, key := range []string{"expect", "assertions"} {
		if f, ok := fs[key]; ok {
			t.Assertions = append(t.Assertions, d.decodeAssertions(f.val, t, what+" "+key)...)
		}
	}
	if f, ok := fs["extract"]; ok {
		t.Extract = d.decodeExtract(f.val, what)
	}
	if f, ok := fs["client"]; ok {
		t.Client = d.decodeClient(f.val, t, what)
	}
	if f, ok := fs["notifications"]; ok {
		t.Notifications = d.decodeMessageExpects(f.val, t, what+" notifications")
	}
	if f, ok := fs["requests"]; ok {
		t.Requests = d.decodeMessageExpects(f.val, t, what+" requests")
	}
	return t
}

// decodeStep finds the one step key of a test and reads it.
func (d *decoder) decodeStep(n *yaml.Node, fs map[string]field, what string) Step {
	var found []string
	kind := ""
	for _, sk := range stepKeys {
		if _, ok := fs[sk.key]; ok {
			found = append(found, sk.key)
			kind = sk.kind
		}
	}
	typeKind := ""
	if f, ok := fs["type"]; ok {
		if v, ok := d.str(f.val, what+" type"); ok {
			k, known := stepTypes[v]
			if !known {
				d.errf(f.val, suggest(v, []string{"tool", "read", "prompt", "list", "complete", "request", "frame"}),
					"%s: unknown test type %q", what, v)
				return nil
			}
			typeKind = k
		}
	}
	switch {
	case len(found) == 0:
		d.errf(n, "one of call, tool, read, prompt, list, complete, request, frame", "%s has no step", what)
		return nil
	case len(found) > 1:
		d.errf(fs[found[1]].key, "", "%s has more than one step: %s", what, strings.Join(found, ", "))
		return nil
	case typeKind != "" && (typeKind != kind || (fs["type"].val.Value == "frame") != (found[0] == "frame")):
		d.errf(fs["type"].val, "", "%s: type %q does not match step key %q", what, fs["type"].val.Value, found[0])
		return nil
	}
	// Keys that belong to one step kind only.
	for key, owner := range map[string]string{"with": assert.KindTool, "input": assert.KindTool, "arguments": assert.KindPrompt} {
		if f, ok := fs[key]; ok && kind != owner {
			d.errf(f.key, "", "%s: %q is only used with a %s step", what, key, owner)
		}
	}
	sf := fs[found[0]]
	switch kind {
	case assert.KindTool:
		s := &ToolCall{}
		s.Tool, _ = d.nonEmpty(sf.val, what+" tool name")
		_, hasWith := fs["with"]
		_, hasInput := fs["input"]
		if hasWith && hasInput {
			d.errf(fs["input"].key, "", "%s: give either with or input, not both", what)
		}
		for _, key := range []string{"with", "input"} {
			if f, ok := fs[key]; ok {
				s.Input, _ = d.object(f.val, what+" "+key)
			}
		}
		if s.Input == nil {
			s.Input = map[string]any{}
		}
		return s
	case assert.KindRead:
		s := &ReadResource{}
		s.URI, _ = d.nonEmpty(sf.val, what+" read uri")
		return s
	case assert.KindPrompt:
		s := &GetPrompt{Arguments: map[string]string{}}
		s.Name, _ = d.nonEmpty(sf.val, what+" prompt name")
		if f, ok := fs["arguments"]; ok {
			s.Arguments, _ = d.strMap(f.val, what+" arguments")
		}
		return s
	case assert.KindList:
		s := &List{}
		if v, ok := d.str(sf.val, what+" list"); ok {
			if !has(listKinds, v) {
				d.errf(sf.val, suggest(v, listKinds), "%s: cannot list %q (one of %s)", what, v, strings.Join(listKinds, ", "))
			}
			s.What = v
		}
		return s
	case assert.KindComplete:
		return d.decodeComplete(sf.val, what)
	case assert.KindRequest:
		if found[0] == "frame" {
			return d.decodeFrame(sf.val, what)
		}
		return d.decodeRequest(sf.val, what)
	}
	return nil
}

// decodeComplete reads `complete: {ref: {type: prompt|resource, name|uri}, argument: {name, value}}`.
func (d *decoder) decodeComplete(n *yaml.Node, what string) Step {
	s := &Complete{}
	fs, ok := d.fields(n, what+" complete", []string{"ref", "argument"})
	if !ok {
		return s
	}
	if f, ok := fs["ref"]; ok {
		if rfs, ok := d.fields(f.val, what+" complete ref", []string{"type", "name", "uri"}); ok {
			typ := ""
			if tf, ok := rfs["type"]; ok {
				typ, _ = d.str(tf.val, "ref type")
			}
			switch strings.TrimPrefix(typ, "ref/") {
			case "prompt":
				s.RefType = "ref/prompt"
				if nf, ok := rfs["name"]; ok {
					s.RefName, _ = d.nonEmpty(nf.val, "ref name")
				} else {
					d.errf(f.val, "", "%s: a prompt ref needs a name", what)
				}
			case "resource":
				s.RefType = "ref/resource"
				if uf, ok := rfs["uri"]; ok {
					s.RefName, _ = d.nonEmpty(uf.val, "ref uri")
				} else {
					d.errf(f.val, "", "%s: a resource ref needs a uri", what)
				}
			default:
				d.errf(f.val, "", "%s: complete ref type must be prompt or resource, got %q", what, typ)
			}
		}
	} else {
		d.errf(n, "", "%s: complete needs a ref", what)
	}
	if f, ok := fs["argument"]; ok {
		if afs, ok := d.fields(f.val, what+" complete argument", []string{"name", "value"}); ok {
			if nf, ok := afs["name"]; ok {
				s.ArgName, _ = d.nonEmpty(nf.val, "argument name")
			} else {
				d.errf(f.val, "", "%s: complete argument needs a name", what)
			}
			if vf, ok := afs["value"]; ok {
				s.ArgValue, _ = d.str(vf.val, "argument value")
			}
		}
	} else {
		d.errf(n, "", "%s: complete needs an argument", what)
	}
	return s
}

// decodeRequest reads `request: {method, params, notification}`.
func (d *decoder) decodeRequest(n *yaml.Node, what string) Step {
	s := &Request{}
	fs, ok := d.fields(n, what+" request", []string{"method", "params", "notification"})
	if !ok {
		return s
	}
	if f, ok := fs["method"]; ok {
		s.Method, _ = d.nonEmpty(f.val, what+" request method")
	} else {
		d.errf(n, "", "%s: request needs a method", what)
	}
	if f, ok := fs["params"]; ok {
		s.Params, _ = d.value(f.val, what+" request params", 1)
	}
	if f, ok := fs["notification"]; ok {
		s.Notification, _ = d.boolean(f.val, what+" request notification")
	}
	return s
}

// decodeExpectError reads `expectError: true|false` or `{code, message}`.
func (d *decoder) decodeExpectError(n *yaml.Node, what string) *ExpectError {
	if n.Kind == yaml.ScalarNode {
		b, ok := d.boolean(n, what+" expectError")
		if !ok || !b {
			return nil
		}
		return &ExpectError{Pos: d.pos(n)}
	}
	e := &ExpectError{Pos: d.pos(n)}
	fs, ok := d.fields(n, what+" expectError", []string{"code", "message"})
	if !ok {
		return nil
	}
	if f, ok := fs["code"]; ok {
		c, _ := d.integer(f.val, "expectError code", -1<<31, 1<<31-1)
		e.Code = int(c)
	}
	if f, ok := fs["message"]; ok {
		e.Message, _ = d.str(f.val, "expectError message")
	}
	return e
}

// decodeAssertions reads a list of assertions in either form and compiles them.
func (d *decoder) decodeAssertions(n *yaml.Node, t *Test, what string) []*Assertion {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "%s must be a list, got %s", what, kindName(n))
		return nil
	}
	var out []*Assertion
	for _, item := range n.Content {
		if a := d.decodeAssertion(item, t, what); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// decodeAssertion reads one assertion: `{type: equals, path: …}` or the shorthand
// `{equals: {path, value}}` / `{exists: $.path}`.
func (d *decoder) decodeAssertion(n *yaml.Node, t *Test, what string) *Assertion {
	if n.Kind != yaml.MappingNode {
		d.errf(n, "", "%s: an assertion must be a mapping, got %s", what, kindName(n))
		return nil
	}
	spec := &assert.Spec{}
	var b *assert.Builtin
	keyPos := map[string]*yaml.Node{}
	errsBefore := len(d.errs)
	typeNode := firstValue(n, "type")
	if typeNode != nil && typeNode.Kind == yaml.ScalarNode {
		// Long form.
		name, ok := d.str(typeNode, what+" assertion type")
		if !ok {
			return nil
		}
		if b, ok = d.reg.Lookup(name); !ok {
			d.errf(typeNode, suggest(name, d.reg.Names()), "%s: unknown assertion type %q", what, name)
			return nil
		}
		allowed := append([]string{"type"}, b.Fields...)
		fs, ok := d.fields(n, fmt.Sprintf("%s %s assertion", what, b.Name), allowed)
		if !ok {
			return nil
		}
		for k, f := range fs {
			keyPos[k] = f.key
			d.specField(spec, k, f.val, b)
		}
	} else {
		// Shorthand: exactly one key, the type.
		if len(n.Content) != 2 {
			d.errf(n, "write {equals: {path: $.x, value: 1}} or {type: equals, path: $.x, value: 1}",
				"%s: a shorthand assertion has exactly one key, the assertion type", what)
			return nil
		}
		k, v := n.Content[0], n.Content[1]
		var ok bool
		if b, ok = d.reg.Lookup(k.Value); !ok {
			d.errf(k, suggest(k.Value, d.reg.Names()), "%s: unknown assertion type %q", what, k.Value)
			return nil
		}
		keyPos["type"] = k
		switch {
		case v.Kind == yaml.MappingNode && b.Shorthand != "schema":
			fs, ok := d.fields(v, fmt.Sprintf("%s %s assertion", what, b.Name), b.Fields)
			if !ok {
				return nil
			}
			for fk, f := range fs {
				keyPos[fk] = f.key
				d.specField(spec, fk, f.val, b)
			}
		case b.Shorthand == "":
			d.errf(v, fmt.Sprintf("write %s: {%s}", b.Name, strings.Join(b.Fields, ", ")),
				"%s: %s takes a mapping, got %s", what, b.Name, kindName(v))
			return nil
		default:
			keyPos[b.Shorthand] = v
			d.specField(spec, b.Shorthand, v, b)
		}
	}
	spec.Type = b.Name
	if len(d.errs) > errsBefore {
		// A field was already reported (bad type, duration or range): compiling the spec
		// with that field missing would only repeat the problem in other words.
		return nil
	}
	if b.Name == "schema" && t.Step != nil && t.Step.Kind() != assert.KindTool {
		if v, isStr := spec.Schema.(string); spec.Schema == nil || (isStr && v == "output") {
			at := n
			if f := valueOf(n, "schema"); f != nil {
				at = f
			}
			d.errf(at, "give the JSON Schema inline: schema: {type: object, …}",
				"%s: a schema assertion without an inline schema checks a tool's structuredContent against its outputSchema; a %s step has none", what, t.Step.Kind())
			return nil
		}
	}
	if b.Name == "snapshot" && spec.Name == "" {
		spec.Name = t.ID
		spec.Keys = append(spec.Keys, "name")
	}
	chk, err := d.reg.Compile(spec, d.copts)
	if err != nil {
		at := n
		var se *assert.SpecError
		if errors.As(err, &se) && keyPos[se.Field] != nil {
			at = keyPos[se.Field]
			if f := valueOf(n, se.Field); f != nil && se.Field != "type" && se.Field != b.Name {
				at = f
			}
		}
		msg := err
		if inner := errors.Unwrap(err); inner != nil {
			msg = inner
		}
		d.errf(at, "", "%s: %s assertion: %v", what, b.Name, msg)
		return nil
	}
	return &Assertion{Spec: *spec, Checker: chk, Pos: d.pos(n)}
}

// firstValue returns the value of key in mapping n, or nil.
func firstValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// valueOf finds key's value in n or in n's single shorthand mapping.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if v := firstValue(n, key); v != nil {
		return v
	}
	if len(n.Content) == 2 && n.Content[1].Kind == yaml.MappingNode {
		return firstValue(n.Content[1], key)
	}
	return nil
}

// specField decodes one key of an assertion into spec.
func (d *decoder) specField(spec *assert.Spec, key string, v *yaml.Node, b *assert.Builtin) {
	what := b.Name + " " + key
	spec.Keys = append(spec.Keys, key)
	switch key {
	case "type":
	case "path":
		spec.Path, _ = d.nonEmpty(v, what)
	case "value":
		spec.Value, _ = d.value(v, what, 1)
	case "pattern":
		spec.Pattern, _ = d.str(v, what)
	case "expected":
		spec.Expected, _ = d.nonEmpty(v, what)
	case "operator":
		spec.Operator, _ = d.str(v, what)
	case "maxMs":
		ms, ok := d.integer(v, what, 1, int64(maxDuration.Milliseconds()))
		if ok {
			spec.Max = msDuration(ms)
		}
	case "max":
		spec.Max, _ = d.duration(v, what)
	case "schema":
		if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
			spec.Schema = v.Value
		} else {
			spec.Schema, _ = d.value(v, what, 1)
			spec.Schema = assert.Normalize(spec.Schema)
		}
	case "expr":
		spec.Expr, _ = d.nonEmpty(v, what)
	case "name":
		spec.Name, _ = d.nonEmpty(v, what)
	}
}

// decodeExtract reads `extract: [{name, path}]` and `extract: [{name, regex, path?}]`.
func (d *decoder) decodeExtract(n *yaml.Node, what string) []*Extract {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "%s extract must be a list, got %s", what, kindName(n))
		return nil
	}
	var out []*Extract
	seen := map[string]bool{}
	for _, item := range n.Content {
		fs, ok := d.fields(item, what+" extract", []string{"name", "path", "regex"})
		if !ok {
			continue
		}
		e := &Extract{Pos: d.pos(item)}
		nf, okName := fs["name"]
		pf, okPath := fs["path"]
		rf, okRegex := fs["regex"]
		if !okName || (!okPath && !okRegex) {
			d.errf(item, "", "%s: an extract needs a name and a path (JSONPath), a regex, or both", what)
			continue
		}
		if name, ok := d.nonEmpty(nf.val, "extract name"); ok {
			if !varNameRE().MatchString(name) {
				d.errf(nf.val, "", "%s: invalid variable name %q", what, name)
			}
			if seen[name] {
				d.errf(nf.val, "", "%s extracts %q twice", what, name)
			}
			seen[name] = true
			e.Name = name
		}
		if okPath {
			if src, ok := d.nonEmpty(pf.val, "extract path"); ok {
				p, err := assert.CompilePath(src)
				if err != nil {
					d.errf(pf.val, "", "%s: %v", what, err)
					continue
				}
				e.Path = p
			}
		}
		if okRegex {
			if src, ok := d.nonEmpty(rf.val, "extract regex"); ok {
				re, err := regexp.Compile(src)
				if err != nil {
					d.errf(rf.val, "", "%s: extract %s: invalid regex: %v", what, e.Name, err)
					continue
				}
				if re.NumSubexp() > 1 {
					d.errf(rf.val, "", "%s: extract %s: the regex has %d groups; it takes the first, so write the others as (?:…)", what, e.Name, re.NumSubexp())
					continue
				}
				e.Regex = re
			}
		}
		if e.Name != "" && (e.Path != nil || e.Regex != nil) {
			out = append(out, e)
		}
	}
	return out
}
