package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Object words that say what a tool reads or writes, for the toxic-flow roles.
var (
	// untrustedObjects are contents third parties author.
	untrustedObjects = []string{"web", "url", "urls", "http", "https", "page", "pages", "webpage", "website", "browser", "email", "emails",
		"mail", "inbox", "message", "messages", "channel", "history", "thread", "threads", "issue", "issues", "comment", "comments",
		"review", "reviews", "ticket", "tickets", "feed", "rss", "tweet", "tweets", "post", "posts", "internet", "online"}
	// untrustedVerbs read from the outside world by themselves.
	untrustedVerbs = []string{"fetch", "browse", "navigate", "scrape", "crawl"}
	// privateObjects are data the user would not publish.
	privateObjects = []string{"file", "files", "directory", "directories", "document", "documents", "drive", "database", "db", "sql",
		"table", "tables", "records", "env", "environment", "secret", "secrets", "credential", "credentials", "password", "passwords",
		"key", "keys", "token", "tokens", "calendar", "contacts", "notes", "inbox", "email", "emails", "graph", "memory", "memories", "contents", "content"}
	// sinkObjects are ways out to other people or systems.
	sinkObjects = []string{"email", "mail", "message", "messages", "post", "comment", "comments", "issue", "issues", "pull", "request",
		"pr", "merge", "tweet", "webhook", "http", "url", "upload", "gist", "reply", "chat", "channel", "slack", "sms", "push", "remote"}
	// sinkVerbs send something out by themselves.
	sinkVerbs = []string{"send", "post", "publish", "email", "mail", "tweet", "upload", "share", "notify", "push", "reply", "comment", "forward", "transmit"}
)

// role is one tool's claim to a toxic-flow role, with why.
type role struct {
	tool   *item
	why    string
	strong bool
}

// classify returns the tool's toxic-flow roles: untrusted-content source, private-data read,
// external sink. Annotations decide first: readOnlyHint: true is never a sink, openWorldHint:
// false is never a source or a sink.
func classify(it *item) (src, priv, sink *role) {
	a := toolAnnotations(it)
	ws := words(it.subject.Name)
	dw := words(firstSentence(it.str("description")))
	verb, class := nameVerb(it.subject.Name)
	has := func(list []string, in []string) string {
		for _, w := range in {
			if slices.Contains(list, w) {
				return w
			}
		}
		return ""
	}
	closed := isFalse(a.openWorld)
	reads := class == "read" || (class == "" && isTrue(a.readOnly))
	if !closed && reads {
		if w := has(untrustedVerbs, ws); w != "" {
			src = &role{it, fmt.Sprintf("%q reads from the open web", w), true}
		} else if w := has(untrustedObjects, ws); w != "" {
			src = &role{it, fmt.Sprintf("reads %s, which third parties write", w), isTrue(a.openWorld)}
		} else if w := has(untrustedObjects, dw); w != "" && isTrue(a.openWorld) {
			src = &role{it, fmt.Sprintf("reads %s (openWorldHint: true)", w), true}
		}
	}
	if reads {
		if w := has(privateObjects, ws); w != "" {
			priv = &role{it, fmt.Sprintf("reads %s", w), closed || isTrue(a.readOnly)}
		} else if w := has([]string{"environment", "env", "secret", "secrets", "credentials", "password", "passwords"}, dw); w != "" {
			priv = &role{it, fmt.Sprintf("reads %s", w), true}
		}
	}
	if !closed && !isTrue(a.readOnly) && (class == "write" || class == "") {
		if slices.Contains(sinkVerbs, verb) {
			sink = &role{it, fmt.Sprintf("%q sends data out", verb), true}
		} else if w := has(sinkObjects, ws); w != "" && class == "write" {
			sink = &role{it, fmt.Sprintf("%s %s reaches other people", verb, w), isTrue(a.openWorld)}
		}
	}
	return src, priv, sink
}

// firstSentence returns the text up to the first full stop or line break.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// toxicFlow reports one finding when the audited server's tools (with the other servers'
// tools) cover all three roles and at least one of the tools is the audited server's. It
// prefers three distinct tools and strong classifications.
func toxicFlow(ctx context.Context, server string, its []*item, others [][]*item) (*Finding, error) {
	all := toolsOf(its)
	for _, o := range others {
		all = append(all, toolsOf(o)...)
	}
	var srcs, privs, sinks []*role
	for _, t := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, p, k := classify(t)
		if s != nil {
			srcs = append(srcs, s)
		}
		if p != nil {
			privs = append(privs, p)
		}
		if k != nil {
			sinks = append(sinks, k)
		}
	}
	if len(srcs) == 0 || len(privs) == 0 || len(sinks) == 0 {
		return nil, nil
	}
	best, bestScore := [3]*role{}, -1
	for _, s := range candidates(server, srcs) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, p := range candidates(server, privs) {
			for _, k := range candidates(server, sinks) {
				if s.tool.subject.Server != server && p.tool.subject.Server != server && k.tool.subject.Server != server {
					continue
				}
				score := 0
				for _, r := range []*role{s, p, k} {
					if r.strong {
						score += 2
					}
				}
				if s.tool != p.tool && p.tool != k.tool && s.tool != k.tool {
					score += 3
				}
				if score > bestScore {
					best, bestScore = [3]*role{s, p, k}, score
				}
			}
		}
	}
	if bestScore < 0 {
		return nil, nil
	}
	r, _ := RuleByID(RuleToxicFlow)
	conf := Tentative
	if bestScore >= 7 {
		conf = Firm
	}
	kinds := []string{"untrusted-source", "private-data", "external-sink"}
	var sigs []Signal
	var related []Subject
	for i, ro := range best {
		sigs = append(sigs, Signal{Kind: kinds[i], Text: ro.tool.subject.Name + ": " + ro.why, Pointer: "/name"})
		if !slices.Contains(related, ro.tool.subject) {
			related = append(related, ro.tool.subject)
		}
	}
	msg := fmt.Sprintf("%s can read untrusted content, %s can read private data and %s can send it out (%d sources, %d private reads, %d sinks in all)",
		best[0].tool.subject.Name, best[1].tool.subject.Name, best[2].tool.subject.Name, len(srcs), len(privs), len(sinks))
	return &Finding{RuleID: r.ID, Severity: r.Severity, Confidence: conf, Subject: Subject{Server: server, Kind: KindServer},
		Message: msg, Signals: sigs, Related: related, Fix: r.Fix}, nil
}

// candidates keeps the roles worth combining: the first three of each kind (strong or not, of
// the audited server or not). Three of each are enough to find three distinct tools with the
// best score, and the search stays constant-size on servers with thousands of tools.
func candidates(server string, rs []*role) []*role {
	var out []*role
	count := map[[2]bool]int{}
	for _, r := range rs {
		k := [2]bool{r.strong, r.tool.subject.Server == server}
		if count[k] < 3 {
			count[k]++
			out = append(out, r)
		}
	}
	return out
}
