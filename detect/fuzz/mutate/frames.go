package mutate

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The frame families. Each returns a case with Kind, What and Frames set; tools/call frames
// name no tool that exists, so no frame family runs a tool.

func (g *Generator) malformedJSON() Case {
	fixed := []struct{ kind, text string }{
		{"open-brace", `{`},
		{"close-brace", `}`},
		{"trailing-comma", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping",}`},
		{"missing-comma", `{"jsonrpc":"2.0" "id":` + IDToken + ` "method":"ping"}`},
		{"single-quotes", `{'jsonrpc':'2.0','id':` + IDToken + `,'method':'ping'}`},
		{"unquoted-keys", `{jsonrpc:"2.0",id:` + IDToken + `,method:"ping"}`},
		{"extra-brace", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping"}}`},
		{"trailing-garbage", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping"} garbage`},
		{"two-objects", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping"}{"jsonrpc":"2.0","method":"ping"}`},
		{"empty-object", `{}`},
		{"null", `null`},
		{"number", `42`},
		{"string", `"ping"`},
		{"boolean", `true`},
		{"nan", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping","params":{"n":NaN}}`},
		{"infinity", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping","params":{"n":-Infinity}}`},
		{"leading-zero", `{"jsonrpc":"2.0","id":0` + IDToken + `,"method":"ping"}`},
		{"bad-exponent", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping","params":{"n":1e}}`},
		{"bad-escape", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"pi\xng"}`},
		{"short-unicode-escape", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping\u12"}`},
		{"comment", `{"jsonrpc":"2.0",/* note */"id":` + IDToken + `,"method":"ping"}`},
		{"byte-order-mark", "\xef\xbb\xbf" + `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping"}`},
		{"whitespace-only", "   \t  "},
		{"unterminated-string", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":"ping`},
		{"missing-value", `{"jsonrpc":"2.0","id":` + IDToken + `,"method":}`},
		{"colon-only", `:`},
	}
	if g.rng.IntN(3) > 0 {
		f := pick(g, fixed)
		return Case{Kind: f.kind, What: "malformed JSON: " + f.kind, Frames: frames([]byte(f.text))}
	}
	// A random edit of a structural character of a well-formed request.
	base, method := g.someRequest()
	var at []int
	for i, c := range base {
		if bytes.IndexByte([]byte(`{}[]:,"`), c) >= 0 {
			at = append(at, i)
		}
	}
	i := pick(g, at)
	const structural = `{}[]:,"`
	out := append([]byte(nil), base[:i]...)
	kind := ""
	switch g.rng.IntN(3) {
	case 0:
		kind = "delete"
		out = append(out, base[i+1:]...)
	case 1:
		kind = "duplicate"
		out = append(out, base[i], base[i])
		out = append(out, base[i+1:]...)
	default:
		kind = "replace"
		others := strings.ReplaceAll(structural, string(base[i]), "")
		out = append(out, others[g.rng.IntN(len(others))])
		out = append(out, base[i+1:]...)
	}
	return Case{Kind: "edit-" + kind, What: fmt.Sprintf("%s: %s %q at byte %d", method, kind, base[i], i), Frames: frames(out)}
}

func (g *Generator) truncated() Case {
	base, method := g.someRequest()
	if g.rng.IntN(4) == 0 {
		base = g.request("tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"list":[1,2,{"deep":{"text":"`+g.word(64)+`"}}]}}`)
		method = "tools/call"
	}
	cut := 1 + g.rng.IntN(len(base)-1)
	return Case{Kind: "cut", What: fmt.Sprintf("%s cut after %d of %d bytes", method, cut, len(base)), Frames: frames(base[:cut])}
}

// invalidSequences are byte sequences that are not UTF-8.
var invalidSequences = []struct{ kind, bytes string }{
	{"0xff", "\xff"},
	{"0xfe", "\xfe"},
	{"lone-continuation", "\x80"},
	{"overlong-slash", "\xc0\xaf"},
	{"overlong-nul", "\xc0\x80"},
	{"truncated-2-byte", "\xc3"},
	{"truncated-3-byte", "\xe2\x82"},
	{"truncated-4-byte", "\xf0\x9f\x98"},
	{"utf8-surrogate", "\xed\xa0\x80"},
	{"beyond-u10ffff", "\xf4\x90\x80\x80"},
	{"5-byte", "\xf8\x88\x80\x80\x80"},
}

func (g *Generator) invalidUTF8() Case {
	seq := pick(g, invalidSequences)
	var frame []byte
	where := ""
	switch g.rng.IntN(4) {
	case 0:
		where = "in the method"
		frame = spliceRaw(g.request("ping@CTL@", ""), []byte(seq.bytes))
	case 1:
		where = "in a tool name"
		frame = g.request("tools/call", `{"name":"mcpspec-fuzz-`+seq.bytes+`","arguments":{}}`)
	case 2:
		where = "in a member name"
		frame = g.request("tools/list", `{"`+seq.bytes+`":1}`)
	default:
		where = "between tokens"
		frame = []byte(`{"jsonrpc":"2.0",` + seq.bytes + `"id":` + IDToken + `,"method":"ping"}`)
	}
	return Case{Kind: seq.kind, What: "invalid UTF-8 (" + seq.kind + ") " + where, Frames: frames(frame)}
}

func (g *Generator) controlChars() Case {
	c := byte(g.rng.IntN(0x20))
	switch g.rng.IntN(7) {
	case 0:
		return Case{Kind: "raw-in-string", What: fmt.Sprintf("raw control character 0x%02x in a string", c),
			Frames: frames(spliceRaw(g.request("tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"text":"a@CTL@b"}}`), []byte{c}))}
	case 1:
		return Case{Kind: "raw-between-tokens", What: fmt.Sprintf("raw control character 0x%02x between tokens", c),
			Frames: frames([]byte(`{"jsonrpc":"2.0",` + string([]byte{c}) + `"id":` + IDToken + `,"method":"ping"}`))}
	case 2:
		return Case{Kind: "escaped-in-method", What: fmt.Sprintf("method \"ping\\u%04x\"", c),
			Frames: frames(g.request("ping"+string(rune(c)), ""))}
	case 3:
		return Case{Kind: "escaped-in-params", What: "escaped control characters and an ANSI escape in a tool name",
			Frames: frames(g.request("tools/call", `{"name":"mcpspec-fuzz-\u0000\u001b[31m\u0007\u0008","arguments":{}}`))}
	case 4:
		return Case{Kind: "newline-in-string", What: "a raw line break inside a string splits the frame",
			Frames: frames(spliceRaw(g.request("tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"text":"a@CTL@b"}}`), []byte("\n")))}
	case 5:
		return Case{Kind: "carriage-return", What: "a raw carriage return between tokens",
			Frames: frames([]byte(`{"jsonrpc":"2.0",` + "\r" + `"id":` + IDToken + `,"method":"ping"}`))}
	default:
		return Case{Kind: "del-and-c1", What: "DEL and C1 control characters in a tool name (valid JSON)",
			Frames: frames(g.request("tools/call", `{"name":"mcpspec-fuzz-`+"\x7f\u0085\u009b"+`","arguments":{}}`))}
	}
}

// spliceRaw replaces the marker @CTL@ in frame with raw bytes.
func spliceRaw(frame, raw []byte) []byte {
	return bytes.Replace(frame, []byte("@CTL@"), raw, 1)
}

// hugeSizes are the sizes huge frames are built to.
var hugeSizes = []int{64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20}

func (g *Generator) hugeSize() int {
	var ok []int
	for _, s := range hugeSizes {
		if s <= g.maxFrame {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return max(g.maxFrame, 1024)
	}
	return pick(g, ok)
}

func (g *Generator) hugeFrame() Case {
	size := g.hugeSize()
	what := fmt.Sprintf(" (%d KiB)", size>>10)
	switch g.rng.IntN(5) {
	case 0:
		return Case{Kind: "long-string", What: "a long string argument" + what,
			Frames: frames(g.request("tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"text":"`+strings.Repeat("A", size)+`"}}`))}
	case 1:
		var b strings.Builder
		b.WriteString("{")
		for i := 0; b.Len() < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		b.WriteString("}")
		return Case{Kind: "many-members", What: "params with many members" + what, Frames: frames(g.request("ping", b.String()))}
	case 2:
		return Case{Kind: "long-method", What: "a long unknown method name" + what,
			Frames: frames(g.request("mcpspec/fuzz/"+strings.Repeat("m", size), ""))}
	case 3:
		return Case{Kind: "long-array", What: "a long array in params" + what,
			Frames: frames(g.request("ping", `{"list":[`+strings.TrimSuffix(strings.Repeat("0,", size/2), ",")+`]}`))}
	default:
		return Case{Kind: "long-number", What: "a number literal of many digits" + what,
			Frames: frames(g.request("ping", `{"n":1`+strings.Repeat("0", size)+`}`))}
	}
}

// nestDepths are the depths deep-nesting cases use.
var nestDepths = []int{16, 65, 100, 1000, 10000, 100000}

func (g *Generator) deepNesting() Case {
	depth := pick(g, nestDepths)
	var open, closing string
	kind := ""
	switch g.rng.IntN(3) {
	case 0:
		kind, open, closing = "arrays", "[", "]"
	case 1:
		kind, open, closing = "objects", `{"a":`, "}"
	default:
		kind, open, closing = "mixed", `[{"a":`, "}]"
	}
	for len(open)*depth > g.maxFrame && depth > 16 {
		depth /= 10
	}
	inner := strings.Repeat(open, depth) + "0" + strings.Repeat(closing, depth)
	r := pick(g, []safeRequest{{"ping", ""}, {"tools/list", ""}, {"tools/call", ""}})
	params := `{"x":` + inner + `}`
	if r.method == "tools/call" {
		params = `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"x":` + inner + `}}`
	}
	n := depth
	if kind == "mixed" {
		n *= 2
	}
	return Case{Kind: kind, What: fmt.Sprintf("%s with %s nested %d levels deep", r.method, kind, n), Frames: frames(g.request(r.method, params))}
}

func (g *Generator) wrongJSONRPC() Case {
	values := []struct{ kind, raw string }{
		{"1.0", `"1.0"`}, {"2", `"2"`}, {"number-2.0", `2.0`}, {"number-2", `2`}, {"null", `null`}, {"absent", ``},
		{"trailing-space", `"2.0 "`}, {"leading-space", `" 2.0"`}, {"fullwidth", `"２.０"`}, {"array", `["2.0"]`},
		{"object", `{}`}, {"empty", `""`}, {"2.00", `"2.00"`}, {"boolean", `true`}, {"3.0", `"3.0"`},
	}
	v := pick(g, values)
	r := pick(g, []safeRequest{{"ping", ""}, {"tools/list", "{}"}})
	member := ""
	if v.raw != "" {
		member = `"jsonrpc":` + v.raw + ","
	}
	frame := `{` + member + `"id":` + IDToken + `,"method":` + quote(r.method)
	if p := g.params(r.params); p != "" {
		frame += `,"params":` + p
	}
	return Case{Kind: v.kind, What: fmt.Sprintf("%s with jsonrpc %s", r.method, orWord(v.raw, "absent")), Frames: frames([]byte(frame + "}"))}
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

func (g *Generator) badMethod() Case {
	if g.rng.IntN(3) == 0 {
		// Not a string: the message is not a valid request.
		raw := pick(g, []string{`123`, `-1`, `1.5`, `null`, `true`, `[]`, `{}`, `["ping"]`, `{"name":"ping"}`})
		return Case{Kind: "non-string", What: "method " + raw,
			Frames: frames([]byte(`{"jsonrpc":"2.0","id":` + IDToken + `,"method":` + raw + `}`))}
	}
	names := []string{
		"mcpspec/fuzz/" + g.word(8), "tools/lists", "TOOLS/LIST", "", " ping", "ping ", "rpc.discover",
		"$/cancelRequest", "tools/list/", "/tools/list", "../../etc/passwd", strings.Repeat("a/", 64),
		"ツール/一覧", "🔧/🔨", "__proto__", "constructor", "toString", "hasOwnProperty", "prototype",
		"tools/call\u200b", "PING", "null", "undefined", "%s%s%n", "${jndi:x}",
	}
	name := pick(g, names)
	if g.rng.IntN(5) == 0 {
		return Case{Kind: "unknown-notification", What: "an unknown notification " + quote("notifications/"+name),
			Frames: frames(g.notification("notifications/"+name, "{}"))}
	}
	return Case{Kind: "unknown", What: "unknown method " + quote(name), Frames: frames(g.request(name, ""))}
}

func (g *Generator) badParams() Case {
	if g.rng.IntN(3) == 0 {
		// Params that are not an object: not a valid MCP request.
		raw := pick(g, []string{`null`, `"params"`, `42`, `true`, `[]`, `[1,"a",null]`, `""`})
		r := pick(g, safeRequests())
		return Case{Kind: "not-an-object", What: fmt.Sprintf("%s with params %s", r.method, raw),
			Frames: frames([]byte(`{"jsonrpc":"2.0","id":` + IDToken + `,"method":` + quote(r.method) + `,"params":` + raw + `}`))}
	}
	cases := []safeRequest{
		{"tools/list", `{"cursor":5}`}, {"tools/list", `{"cursor":"mcpspec-fuzz-bogus-cursor"}`}, {"tools/list", `{"cursor":null}`},
		{"tools/list", `{"cursor":{}}`}, {"tools/call", `{"name":5}`}, {"tools/call", `{"name":null}`}, {"tools/call", `{}`},
		{"tools/call", `{"name":""}`}, {"tools/call", `{"name":["mcpspec-fuzz-no-such-tool"]}`},
		{"tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":"text"}`},
		{"tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":[1]}`},
		{"tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":null}`},
		{"resources/read", `{"uri":5}`}, {"resources/read", `{}`}, {"resources/read", `{"uri":""}`}, {"resources/read", `{"uri":null}`},
		{"resources/read", `{"uri":"\u0000"}`}, {"resources/read", `{"uri":"mcpspec-fuzz:///../../../etc/passwd"}`},
		{"prompts/get", `{"name":5}`}, {"prompts/get", `{}`}, {"prompts/get", `{"name":"mcpspec-fuzz-no-such-prompt","arguments":"text"}`},
		{"prompts/get", `{"name":"mcpspec-fuzz-no-such-prompt","arguments":{"a":5}}`},
		{"completion/complete", `{}`}, {"completion/complete", `{"ref":"prompt"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"mcpspec-fuzz-no-such-prompt"},"argument":5}`},
		{"completion/complete", `{"ref":{"type":"ref/mcpspec-fuzz"},"argument":{"name":"a","value":"b"}}`},
		{"logging/setLevel", `{"level":"mcpspec-fuzz"}`}, {"logging/setLevel", `{"level":5}`}, {"logging/setLevel", `{}`},
		{"resources/subscribe", `{"uri":5}`}, {"resources/unsubscribe", `{}`},
		{"ping", `{"unexpected":{"nested":[1,2,3]}}`},
	}
	r := pick(g, cases)
	if g.rng.IntN(6) == 0 {
		// The _meta member itself, malformed or odd (no generator _meta: it would repeat the key).
		meta := pick(g, []string{`{}`, `{"progressToken":"mcpspec-fuzz"}`, `"meta"`, `{"progressToken":{}}`, `{"progressToken":1.5}`, `null`, `[]`})
		return Case{Kind: "meta", What: "tools/list with _meta " + meta,
			Frames: frames([]byte(`{"jsonrpc":"2.0","id":` + IDToken + `,"method":"tools/list","params":{"_meta":` + meta + `}}`))}
	}
	return Case{Kind: "wrong-members", What: fmt.Sprintf("%s with params %s", r.method, r.params), Frames: frames(g.request(r.method, r.params))}
}

func (g *Generator) badID() Case {
	switch g.rng.IntN(4) {
	case 0:
		// The same request twice: the second reuses a pending or answered id.
		r, _ := g.someRequest()
		return Case{Kind: "duplicate", What: "the same request twice with one id", Frames: frames(r, r)}
	case 1:
		// A response the client was never asked for.
		raw := pick(g, []string{
			`{"jsonrpc":"2.0","id":` + IDToken + `,"result":{}}`,
			`{"jsonrpc":"2.0","id":987654321,"error":{"code":-32000,"message":"mcpspec fuzz"}}`,
			`{"jsonrpc":"2.0","id":null,"result":{}}`,
			`{"jsonrpc":"2.0","id":` + IDToken + `,"result":{},"error":{"code":1,"message":"both"}}`,
		})
		return Case{Kind: "unsolicited-response", What: "an unsolicited response " + raw, Frames: frames([]byte(raw))}
	}
	ids := []struct{ kind, raw string }{
		{"null", `null`}, {"fraction", `1.5`}, {"negative", `-1`}, {"zero", `0`},
		{"beyond-2^53", `9007199254740993`}, {"beyond-int64", `9223372036854775808`}, {"below-int64", `-9223372036854775809`},
		{"1e300", `1e300`}, {"30-digits", `123456789012345678901234567890`}, {"exponent", `1E2`},
		{"empty-string", `""`}, {"string-500", quote(strings.Repeat("x", 500))}, {"string-4096", quote(strings.Repeat("x", 4096))},
		{"unicode-string", `"ツ🔧"`}, {"object", `{}`}, {"array", `[1]`}, {"boolean", `true`},
		{"string-of-reserved", `"` + IDToken + `"`}, {"reused-1", `1`}, {"reused-2", `2`},
	}
	id := pick(g, ids)
	r := pick(g, safeRequests())
	return Case{Kind: id.kind, What: fmt.Sprintf("%s with id %s", r.method, abbreviate(id.raw, 24)), Frames: frames(g.message(`"id":`+id.raw, r.method, r.params))}
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (g *Generator) batch() Case {
	ping := string(g.request("ping", ""))
	list := string(g.message(`"id":"mcpspec-fuzz-b2"`, "tools/list", "{}"))
	note := string(g.notification("notifications/mcpspec-fuzz", "{}"))
	many := make([]string, 100)
	for i := range many {
		many[i] = string(g.message(`"id":"mcpspec-fuzz-m`+strconv.Itoa(i)+`"`, "ping", ""))
	}
	batches := []struct{ kind, text string }{
		{"empty", `[]`}, {"number", `[1]`}, {"empty-object", `[{}]`}, {"nested-empty", `[[]]`},
		{"one", `[` + ping + `]`}, {"two", `[` + ping + `,` + list + `]`}, {"with-garbage", `[` + ping + `,"garbage"]`},
		{"notification-only", `[` + note + `]`}, {"nested", `[[` + ping + `]]`}, {"hundred", `[` + strings.Join(many, ",") + `]`},
		{"with-response", `[` + ping + `,{"jsonrpc":"2.0","id":"mcpspec-fuzz-r","result":{}}]`},
	}
	b := pick(g, batches)
	return Case{Kind: b.kind, What: "a batch: " + b.kind, Frames: frames([]byte(b.text))}
}

func (g *Generator) notificationID() Case {
	notes := []safeRequest{
		{"notifications/initialized", ""},
		{"notifications/cancelled", `{"requestId":` + IDToken + `,"reason":"mcpspec fuzz"}`},
		{"notifications/progress", `{"progressToken":"mcpspec-fuzz","progress":1}`},
		{"notifications/roots/list_changed", ""},
		{"notifications/message", `{"level":"info","data":"mcpspec fuzz"}`},
	}
	n := pick(g, notes)
	return Case{Kind: strings.TrimPrefix(n.method, "notifications/"), What: n.method + " with an id", Frames: frames(g.request(n.method, n.params))}
}

// beforeInit frames go on a fresh connection: no _meta, no handshake.
func (g *Generator) beforeInit() Case {
	bare := &Generator{rng: g.rng, maxFrame: g.maxFrame}
	cases := []struct{ kind, what string }{
		{"tools/list", ""}, {"tools/call", ""}, {"resources/list", ""}, {"ping", ""}, {"initialized", ""},
		{"initialize-bad-version-type", ""}, {"initialize-unknown-version", ""}, {"initialize-bad-capabilities", ""},
		{"initialize-empty", ""}, {"garbage", ""}, {"logging/setLevel", ""},
	}
	c := pick(g, cases)
	var f []byte
	switch c.kind {
	case "tools/call":
		f = bare.request("tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{}}`)
	case "initialized":
		f = bare.notification("notifications/initialized", "")
	case "initialize-bad-version-type":
		f = bare.request("initialize", `{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"mcpspec-fuzz","version":"0"}}`)
	case "initialize-unknown-version":
		f = bare.request("initialize", `{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"mcpspec-fuzz","version":"0"}}`)
	case "initialize-bad-capabilities":
		f = bare.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":"all","clientInfo":{"name":5}}`)
	case "initialize-empty":
		f = bare.request("initialize", `{}`)
	case "garbage":
		f = []byte(`mcpspec fuzz: not a message`)
	case "logging/setLevel":
		f = bare.request("logging/setLevel", `{"level":"debug"}`)
	default:
		p := "{}"
		if c.kind == "ping" {
			p = ""
		}
		f = bare.request(c.kind, p)
	}
	return Case{Kind: c.kind, What: c.kind + " before initialize", Frames: frames(f)}
}
