package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session"
)

// ruleTimeout bounds the when assertions of one reply rule (expressions).
const ruleTimeout = 5 * time.Second

// declared returns the client capabilities a collection's `client:` blocks (its own and its
// tests') give replies for: its servers' sessions declare them all, since one session serves
// many tests.
func declared(col *collection.Collection) session.ClientCapabilities {
	var caps session.ClientCapabilities
	add := func(c *collection.ClientSpec) {
		r, s, e := c.Declares()
		caps.Roots = caps.Roots || r
		caps.Sampling = caps.Sampling || s
		caps.Elicitation = caps.Elicitation || e
	}
	add(col.Client)
	for _, t := range col.Tests {
		add(t.Client)
	}
	return caps
}

// replier returns the function that answers the server's requests while t runs: t's rules
// first, then the collection's (t nil: between tests, the collection's only). A request of a
// declared kind that no rule answers gets a JSON-RPC error saying so; anything else is left
// to the session (ping, roots/list without roots, undeclared methods).
func (cr *colRun) replier(t *collection.Test) func(session.ServerRequest) (session.ClientReply, bool) {
	caps := declared(cr.col)
	var own *collection.ClientSpec
	who := "the collection"
	if t != nil {
		own = t.Client
		who = fmt.Sprintf("test %q", t.Name)
	}
	return func(r session.ServerRequest) (session.ClientReply, bool) {
		var rules []*collection.ReplyRule
		key := ""
		switch r.Method {
		case "roots/list":
			roots := rootsOf(own)
			if roots == nil {
				roots = rootsOf(cr.col.Client)
			}
			if roots == nil {
				return session.ClientReply{}, false
			}
			return cr.rootsReply(roots), true
		case "sampling/createMessage":
			if !caps.Sampling {
				return session.ClientReply{}, false
			}
			key = "sampling"
			rules = append(samplingOf(own), samplingOf(cr.col.Client)...)
		case "elicitation/create":
			if !caps.Elicitation {
				return session.ClientReply{}, false
			}
			key = "elicitation"
			rules = append(elicitationOf(own), elicitationOf(cr.col.Client)...)
		default:
			return session.ClientReply{}, false
		}
		if len(rules) == 0 {
			return session.ClientReply{Code: -32603, Message: fmt.Sprintf("mcpspec: %s gives no %s reply (add client.%s to the test or the collection)", who, r.Method, key)}, true
		}
		rule := cr.matchRule(rules, r.Params)
		if rule == nil {
			return session.ClientReply{Code: -32603, Message: fmt.Sprintf("mcpspec: no client.%s rule of %s matches this %s request", key, who, r.Method)}, true
		}
		return cr.ruleReply(rule, r.Method), true
	}
}

func rootsOf(c *collection.ClientSpec) []collection.Root {
	if c == nil {
		return nil
	}
	return c.Roots
}

func samplingOf(c *collection.ClientSpec) []*collection.ReplyRule {
	if c == nil {
		return nil
	}
	return c.Sampling
}

func elicitationOf(c *collection.ClientSpec) []*collection.ReplyRule {
	if c == nil {
		return nil
	}
	return c.Elicitation
}

// matchRule returns the first rule whose when assertions all hold over params, or nil.
func (cr *colRun) matchRule(rules []*collection.ReplyRule, params json.RawMessage) *collection.ReplyRule {
	var subj *assert.Subject
	for _, rule := range rules {
		if len(rule.When) == 0 {
			return rule
		}
		if subj == nil {
			subj = messageSubject(params, cr.vars)
		}
		if holds(subj, rule.When) {
			return rule
		}
	}
	return nil
}

// messageSubject is the assertion subject of a message's params ({} when absent or not JSON).
func messageSubject(params json.RawMessage, vars assert.Vars) *assert.Subject {
	raw := params
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	s, err := assert.NewSubject(assert.KindMessage, raw)
	if err != nil {
		s = &assert.Subject{Kind: assert.KindMessage, Raw: json.RawMessage("{}"), Doc: map[string]any{}}
	}
	s.Vars = vars
	return s
}

// holds reports whether every assertion holds over s.
func holds(s *assert.Subject, as []*collection.Assertion) bool {
	ctx, cancel := context.WithTimeout(context.Background(), ruleTimeout)
	defer cancel()
	for _, a := range as {
		if a.Checker.Check(ctx, s) != nil {
			return false
		}
	}
	return true
}

// ruleReply builds a rule's answer, with its variables expanded.
func (cr *colRun) ruleReply(rule *collection.ReplyRule, method string) session.ClientReply {
	if rule.Error != nil {
		return session.ClientReply{Code: rule.Error.Code, Message: rule.Error.Message}
	}
	v, err := cr.vars.Expand(rule.Reply)
	if err != nil {
		return session.ClientReply{Code: -32603, Message: fmt.Sprintf("mcpspec: the client.%s reply (line %d): %v", replyKey(method), rule.Pos.Line, err)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return session.ClientReply{Code: -32603, Message: fmt.Sprintf("mcpspec: the client reply (line %d) cannot be encoded: %v", rule.Pos.Line, err)}
	}
	return session.ClientReply{Result: b}
}

func replyKey(method string) string {
	if method == "elicitation/create" {
		return "elicitation"
	}
	return "sampling"
}

// rootsReply answers roots/list with roots, their variables expanded.
func (cr *colRun) rootsReply(roots []collection.Root) session.ClientReply {
	out := make([]session.Root, 0, len(roots))
	for _, r := range roots {
		uri, err := cr.vars.ExpandString(r.URI)
		if err != nil {
			return session.ClientReply{Code: -32603, Message: "mcpspec: client.roots: " + err.Error()}
		}
		name, err := cr.vars.ExpandString(r.Name)
		if err != nil {
			return session.ClientReply{Code: -32603, Message: "mcpspec: client.roots: " + err.Error()}
		}
		out = append(out, session.Root{URI: uri, Name: name})
	}
	b, _ := json.Marshal(map[string]any{"roots": out})
	return session.ClientReply{Result: b}
}
