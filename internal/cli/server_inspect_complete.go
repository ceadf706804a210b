package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/session"
)

// completer completes an inspect line on Tab: a command (".ca" → ".call "), a tool name after
// .call and .schema, and an argument name inside .call's JSON object (`.call add {"a` →
// `.call add {"a": `). Several candidates complete to their longest common prefix. It is safe
// for concurrent use: the line editor calls it from the reader goroutine while the REPL
// refreshes the tools.
type completer struct {
	commands []string

	mu sync.Mutex // guards tools
	// tools are the tool names with their argument names, as last listed.
	tools map[string][]string
}

func newCompleter() *completer {
	c := &completer{}
	for _, rc := range replCommands() {
		c.commands = append(c.commands, rc.name)
	}
	c.commands = append(c.commands, ".quit")
	return c
}

// setTools records the tools the server listed.
func (c *completer) setTools(tools []session.Tool) {
	m := make(map[string][]string, len(tools))
	for _, tl := range tools {
		var args []string
		var schema struct {
			Properties json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(tl.InputSchema, &schema) == nil {
			props, _ := orderedProps(schema.Properties)
			for _, p := range props {
				args = append(args, p.name)
			}
		}
		m[tl.Name] = args
	}
	c.mu.Lock()
	c.tools = m
	c.mu.Unlock()
}

// argKeyRE matches an argument name being typed as a key of .call's JSON object: after { or a
// comma, an opening quote and the name so far.
var argKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[{,]\s*"([^"\\]*)$`) })

// complete is a golang.org/x/term AutoCompleteCallback: on Tab it completes the word before
// pos and returns the new line and cursor position; ok is false when it has nothing to add.
func (c *completer) complete(line string, pos int, key rune) (string, int, bool) {
	if key != '\t' || pos < 0 || pos > len(line) {
		return "", 0, false
	}
	before, after := line[:pos], line[pos:]
	cmd, rest, spaced := strings.Cut(before, " ")
	var word string
	var candidates []string
	suffix := " "
	switch {
	case !spaced:
		word, candidates = cmd, c.commands
	case (cmd == ".call" || cmd == ".schema") && !strings.Contains(rest, " "):
		word, candidates = rest, c.toolNames()
	case cmd == ".call":
		tool, args, _ := strings.Cut(rest, " ")
		m := argKeyRE().FindStringSubmatch(args)
		if m == nil {
			return "", 0, false
		}
		word, candidates, suffix = m[1], c.argNames(tool), `": `
	default:
		return "", 0, false
	}
	var matches []string
	for _, cand := range candidates {
		if strings.HasPrefix(cand, word) {
			matches = append(matches, cand)
		}
	}
	if len(matches) == 0 {
		return "", 0, false
	}
	done := commonPrefix(matches)
	if len(matches) == 1 {
		done += suffix
	}
	if done == word {
		return "", 0, false
	}
	newBefore := before[:len(before)-len(word)] + done
	return newBefore + after, len(newBefore), true
}

func (c *completer) toolNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	return names
}

func (c *completer) argNames(tool string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools[tool]
}

// commonPrefix is the longest prefix every string of ss shares.
func commonPrefix(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		for !strings.HasPrefix(s, p) {
			_, size := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-size]
		}
	}
	return p
}
