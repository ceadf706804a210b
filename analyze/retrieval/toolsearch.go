package retrieval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/session"
)

// ToolCaller calls a tool; *session.Session is one.
type ToolCaller interface {
	CallTool(ctx context.Context, name string, args any, opts *session.CallOptions) (*session.ToolResult, error)
}

// ToolSearch uses a search tool of the server: each query is a tools/call of tool with
// {queryArg: query} (and {limitArg: limit} when limitArg is set). The ranking is read from
// the result without assuming its shape: the names of known tools in the order they first
// appear, as whole words, in the structuredContent and then the text content. A result with
// isError fails the query.
func ToolSearch(c ToolCaller, tool, queryArg, limitArg string, known []string) SearchFunc {
	// Longer names first, so read_file_text is not found as read_file.
	names := slices.Clone(known)
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	return func(ctx context.Context, query string, limit int) ([]string, error) {
		args := map[string]any{queryArg: query}
		if limitArg != "" {
			args[limitArg] = limit
		}
		res, err := c.CallTool(ctx, tool, args, nil)
		if err != nil {
			return nil, fmt.Errorf("tools/call %s: %w", tool, err)
		}
		text := resultText(res)
		if res.IsError {
			return nil, fmt.Errorf("tools/call %s answered isError: %s", tool, firstLine(text))
		}
		return rankedNames(text, names, limit), nil
	}
}

// resultText is the structuredContent (as JSON) followed by every text content block.
func resultText(res *session.ToolResult) string {
	var b strings.Builder
	if len(res.StructuredContent) > 0 {
		b.Write(res.StructuredContent)
		b.WriteByte('\n')
	}
	for _, raw := range res.Content {
		var c struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Type == "text" {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// rankedNames returns the names (longest first) found in text as whole words, ordered by
// where each first appears, at most limit.
func rankedNames(text string, names []string, limit int) []string {
	type at struct {
		name string
		pos  int
	}
	var found []at
	taken := make([]bool, len(text)) // bytes already matched by a longer name
	for _, n := range names {
		if n == "" {
			continue
		}
		for i := 0; i+len(n) <= len(text); {
			j := strings.Index(text[i:], n)
			if j < 0 {
				break
			}
			p := i + j
			end := p + len(n)
			if !taken[p] && !joinsBefore(text, p) && !joinsAfter(text, end) {
				for k := p; k < end; k++ {
					taken[k] = true
				}
				found = append(found, at{n, p})
				break
			}
			i = p + 1
		}
	}
	slices.SortFunc(found, func(a, b at) int { return a.pos - b.pos })
	var out []string
	for _, f := range found {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, f.name)
	}
	return out
}

// wordByte reports whether b continues an identifier.
func wordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// joinsBefore reports whether the text before p continues a longer name: a word byte, or a
// '.' or '/' right after one ("github.create_issue").
func joinsBefore(text string, p int) bool {
	if p == 0 {
		return false
	}
	b := text[p-1]
	return wordByte(b) || (b == '.' || b == '/') && p >= 2 && wordByte(text[p-2])
}

// joinsAfter reports whether the text from end continues a longer name; a '.' that ends a
// sentence does not.
func joinsAfter(text string, end int) bool {
	if end == len(text) {
		return false
	}
	b := text[end]
	return wordByte(b) || (b == '.' || b == '/') && end+1 < len(text) && wordByte(text[end+1])
}
