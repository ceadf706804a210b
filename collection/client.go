package collection

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// ClientSpec is how the client answers the server's requests (`client:`), for the whole
// collection or one test. A test's rules are tried before the collection's; its roots replace
// the collection's. Every capability given anywhere in a collection is declared in the
// handshake of its servers' sessions.
type ClientSpec struct {
	// Roots answer roots/list; nil when not given.
	Roots []Root
	// Sampling and Elicitation answer sampling/createMessage and elicitation/create: the first
	// rule whose When holds gives the reply. A request no rule matches is answered with a
	// JSON-RPC error.
	Sampling    []*ReplyRule
	Elicitation []*ReplyRule
	Pos         Pos
}

// Root is one entry of a roots/list answer.
type Root struct {
	URI  string
	Name string
}

// ReplyRule answers a request that matches When with Reply, or with Error.
type ReplyRule struct {
	// When are assertions over the request's params (`$` is the params; contains, matches and
	// expr read every string in them); all must hold. Empty matches every request.
	When []*Assertion
	// Reply is the result sent back; strings may hold variable templates.
	Reply any
	// Error, when set, is sent instead of a result.
	Error *ReplyError
	Pos   Pos
}

// ReplyError is a JSON-RPC error a rule answers with.
type ReplyError struct {
	Code    int
	Message string
}

// Declares reports which capabilities c gives replies for (nil gives none).
func (c *ClientSpec) Declares() (roots, sampling, elicitation bool) {
	if c == nil {
		return false, false, false
	}
	return c.Roots != nil, len(c.Sampling) > 0, len(c.Elicitation) > 0
}

// clientKeys are the keys of a `client:` block; ruleKeys those of one reply rule.
var (
	clientKeys = []string{"roots", "sampling", "elicitation"}
	ruleKeys   = []string{"when", "reply", "error"}
)

// elicitationActions are the actions of an elicitation result.
var elicitationActions = []string{"accept", "decline", "cancel"}

// decodeClient reads `client: {roots, sampling, elicitation}`; t is the test it belongs to
// (nil at the collection level).
func (d *decoder) decodeClient(n *yaml.Node, t *Test, what string) *ClientSpec {
	what += " client"
	fs, ok := d.fields(n, what, clientKeys)
	if !ok {
		return nil
	}
	c := &ClientSpec{Pos: d.pos(n)}
	if f, ok := fs["roots"]; ok {
		c.Roots = d.decodeRoots(f.val, what+" roots")
	}
	if f, ok := fs["sampling"]; ok {
		c.Sampling = d.decodeRules(f.val, t, what+" sampling", samplingReply)
	}
	if f, ok := fs["elicitation"]; ok {
		c.Elicitation = d.decodeRules(f.val, t, what+" elicitation", elicitationReply)
	}
	return c
}

// decodeRoots reads a list of roots: URIs, or {uri, name} mappings.
func (d *decoder) decodeRoots(n *yaml.Node, what string) []Root {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "write a list: [file:///path, {uri: file:///other, name: other}]", "%s must be a list, got %s", what, kindName(n))
		return nil
	}
	out := make([]Root, 0, len(n.Content))
	for _, e := range n.Content {
		if e.Kind == yaml.ScalarNode {
			if uri, ok := d.nonEmpty(e, what+" entry"); ok {
				out = append(out, Root{URI: uri})
			}
			continue
		}
		fs, ok := d.fields(e, what+" entry", []string{"uri", "name"})
		if !ok {
			continue
		}
		r := Root{}
		if f, ok := fs["uri"]; ok {
			r.URI, _ = d.nonEmpty(f.val, what+" uri")
		} else {
			d.errf(e, "", "%s: a root needs a uri", what)
			continue
		}
		if f, ok := fs["name"]; ok {
			r.Name, _ = d.str(f.val, what+" name")
		}
		out = append(out, r)
	}
	return out
}

// replyShape completes and checks a rule's reply for one kind of request; n is the reply's
// node, for positions.
type replyShape func(d *decoder, n *yaml.Node, v any, what string) any

// decodeRules reads one rule, a list of rules, or a scalar reply (a rule without a condition).
func (d *decoder) decodeRules(n *yaml.Node, t *Test, what string, shape replyShape) []*ReplyRule {
	switch n.Kind {
	case yaml.ScalarNode:
		v, ok := d.value(n, what, 1)
		if !ok {
			return nil
		}
		return []*ReplyRule{{Reply: shape(d, n, v, what), Pos: d.pos(n)}}
	case yaml.MappingNode:
		if r := d.decodeRule(n, t, what, shape); r != nil {
			return []*ReplyRule{r}
		}
		return nil
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			d.errf(n, "", "%s: the list of rules is empty", what)
		}
		var out []*ReplyRule
		for i, e := range n.Content {
			if e.Kind != yaml.MappingNode {
				d.errf(e, "write {when: …, reply: …}", "%s rule #%d must be a mapping, got %s", what, i+1, kindName(e))
				continue
			}
			if r := d.decodeRule(e, t, fmt.Sprintf("%s rule #%d", what, i+1), shape); r != nil {
				out = append(out, r)
			}
		}
		return out
	}
	d.errf(n, "", "%s must be a reply, a rule {when, reply} or a list of rules, got %s", what, kindName(n))
	return nil
}

// decodeRule reads `{when, reply | error}`.
func (d *decoder) decodeRule(n *yaml.Node, t *Test, what string, shape replyShape) *ReplyRule {
	fs, ok := d.fields(n, what, ruleKeys)
	if !ok {
		return nil
	}
	r := &ReplyRule{Pos: d.pos(n)}
	if f, ok := fs["when"]; ok {
		r.When = d.decodeMessageAssertions(f.val, t, what+" when")
	}
	rf, hasReply := fs["reply"]
	ef, hasError := fs["error"]
	switch {
	case hasReply && hasError:
		d.errf(ef.key, "", "%s: give either reply or error, not both", what)
		return nil
	case hasReply:
		v, ok := d.value(rf.val, what+" reply", 1)
		if !ok {
			return nil
		}
		r.Reply = shape(d, rf.val, v, what+" reply")
	case hasError:
		r.Error = d.decodeReplyError(ef.val, what+" error")
	default:
		d.errf(n, "add reply: … (or error: {code, message})", "%s has no reply", what)
		return nil
	}
	return r
}

// decodeReplyError reads `error: {code, message}` (code defaults to -1, a refusal).
func (d *decoder) decodeReplyError(n *yaml.Node, what string) *ReplyError {
	e := &ReplyError{Code: -1, Message: "declined by the collection"}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		e.Message, _ = d.nonEmpty(n, what)
		return e
	}
	fs, ok := d.fields(n, what, []string{"code", "message"})
	if !ok {
		return e
	}
	if f, ok := fs["code"]; ok {
		c, _ := d.integer(f.val, what+" code", -1<<31, 1<<31-1)
		if c == 0 {
			d.errf(f.val, "", "%s: code must not be 0", what)
		}
		e.Code = int(c)
	}
	if f, ok := fs["message"]; ok {
		e.Message, _ = d.nonEmpty(f.val, what+" message")
	}
	return e
}

// samplingReply completes a sampling/createMessage result: a string is the text of an
// assistant message; a mapping needs content and gets role assistant and model mcpspec when it
// has none.
func samplingReply(d *decoder, n *yaml.Node, v any, what string) any {
	switch v := v.(type) {
	case string:
		return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": v},
			"model": "mcpspec", "stopReason": "endTurn"}
	case map[string]any:
		if _, ok := v["content"]; !ok {
			d.errf(n, `a sampling reply is text, or {content: {type: text, text: …}, model: …}`, "%s has no content", what)
		}
		if _, ok := v["role"]; !ok {
			v["role"] = "assistant"
		}
		if _, ok := v["model"]; !ok {
			v["model"] = "mcpspec"
		}
		return v
	}
	d.errf(n, `a sampling reply is text, or {content: {type: text, text: …}, model: …}`, "%s must be a string or a mapping", what)
	return nil
}

// elicitationReply completes an elicitation/create result: a string is an action (accept,
// decline, cancel); a mapping needs an action.
func elicitationReply(d *decoder, n *yaml.Node, v any, what string) any {
	hint := "an elicitation reply is accept, decline, cancel, or {action: accept, content: {…}}"
	switch v := v.(type) {
	case string:
		if !has(elicitationActions, v) && len(References(v)) == 0 {
			d.errf(n, suggest(v, elicitationActions), "%s: unknown action %q (one of accept, decline, cancel)", what, v)
		}
		return map[string]any{"action": v}
	case map[string]any:
		a, ok := v["action"]
		if !ok {
			d.errf(n, hint, "%s has no action", what)
			return v
		}
		if s, ok := a.(string); !ok || (!has(elicitationActions, s) && len(References(s)) == 0) {
			d.errf(n, hint, "%s: unknown action %v", what, a)
		}
		return v
	}
	d.errf(n, hint, "%s must be a string or a mapping", what)
	return nil
}

// messageUnfit are the assertion types that say nothing about a message's params.
var messageUnfit = []string{"latency", "isError", "mimeType", "snapshot"}

// decodeMessageAssertions reads one assertion or a list of them over a message's params
// (`when:`, `where:`, `expect:` of messages).
func (d *decoder) decodeMessageAssertions(n *yaml.Node, t *Test, what string) []*Assertion {
	owner := t
	if owner == nil {
		owner = &Test{ID: "client"}
	}
	var out []*Assertion
	if n.Kind == yaml.MappingNode {
		if a := d.decodeAssertion(n, owner, what); a != nil {
			out = append(out, a)
		}
	} else {
		out = d.decodeAssertions(n, owner, what)
	}
	kept := out[:0]
	for _, a := range out {
		switch {
		case has(messageUnfit, a.Spec.Type):
			d.errs = append(d.errs, &Error{Pos: a.Pos, Hint: "use equals, contains, matches, exists, notExists, type, length, schema (inline) or expr over the params",
				Msg: fmt.Sprintf("%s: a %s assertion does not apply to a message's params", what, a.Spec.Type)})
		case a.Spec.Type == "schema" && (a.Spec.Schema == nil || a.Spec.Schema == "output"):
			d.errs = append(d.errs, &Error{Pos: a.Pos, Hint: "give the schema inline: schema: {type: object, required: [messages]}",
				Msg: fmt.Sprintf("%s: a message has no output schema", what)})
		default:
			kept = append(kept, a)
		}
	}
	return kept
}
