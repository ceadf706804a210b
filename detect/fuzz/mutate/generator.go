package mutate

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
)

// DefaultMaxFrame is the largest frame generated unless Options.MaxFrame says otherwise.
const DefaultMaxFrame = 4 << 20

// Options configures a [Generator]. A nil *Options means every frame family and no tools.
type Options struct {
	// Families are the enabled families (nil: all). [Schema] needs Tools.
	Families []Family
	// Tools are the tools [Schema] cases may call, with their input schemas.
	Tools []Tool
	// Meta, when set, is the members (without braces) added as `_meta` to every params object
	// (the stateless era's per-request protocol version and capabilities).
	Meta []byte
	// MaxFrame bounds the size of generated frames (0: [DefaultMaxFrame]).
	MaxFrame int
}

// Tool is one tool schema cases may call.
type Tool struct {
	Name        string
	InputSchema json.RawMessage
}

// Generator makes a reproducible sequence of cases from a seed: the same seed, options and
// tools give the same cases, byte for byte. It is not safe for concurrent use.
type Generator struct {
	rng      *rand.Rand
	families []Family // each family once per unit of weight
	meta     []byte
	maxFrame int
	tools    []*toolPlan
	n        int
}

// Family weights: how often each is picked. [Schema] covers every tool, so it gets more; a
// [BeforeInit] case starts a server of its own, so it gets less.
const (
	frameWeight      = 3
	schemaWeight     = 4 * frameWeight
	beforeInitWeight = 1
)

// New returns a generator seeded with seed.
func New(seed int64, o *Options) *Generator {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	fams := opts.Families
	if fams == nil {
		fams = Families()
	}
	g := &Generator{
		rng:      rand.New(rand.NewPCG(uint64(seed), 0x6d6370737065632d)), // "mcpspec-"
		meta:     opts.Meta,
		maxFrame: opts.MaxFrame,
	}
	for _, t := range opts.Tools {
		g.tools = append(g.tools, planTool(t))
	}
	for _, f := range fams {
		weight := frameWeight
		switch {
		case f == Schema && len(g.tools) == 0:
			weight = 0
		case f == Schema:
			weight = schemaWeight
		case f == BeforeInit:
			weight = beforeInitWeight
		}
		for range weight {
			g.families = append(g.families, f)
		}
	}
	return g
}

// Empty reports whether the generator has nothing to generate (only [Schema] enabled and no
// tool to call).
func (g *Generator) Empty() bool { return len(g.families) == 0 }

// Families returns the enabled families that can generate cases, in [Families] order.
func (g *Generator) Families() []Family {
	var out []Family
	for _, f := range Families() {
		if slices.Contains(g.families, f) {
			out = append(out, f)
		}
	}
	return out
}

// Next returns the next case. It must not be called when [Generator.Empty].
func (g *Generator) Next() Case {
	g.n++
	f := g.families[g.rng.IntN(len(g.families))]
	var c Case
	switch f {
	case MalformedJSON:
		c = g.malformedJSON()
	case Truncated:
		c = g.truncated()
	case InvalidUTF8:
		c = g.invalidUTF8()
	case ControlChars:
		c = g.controlChars()
	case HugeFrame:
		c = g.hugeFrame()
	case DeepNesting:
		c = g.deepNesting()
	case WrongJSONRPC:
		c = g.wrongJSONRPC()
	case BadMethod:
		c = g.badMethod()
	case BadParams:
		c = g.badParams()
	case BadID:
		c = g.badID()
	case Batch:
		c = g.batch()
	case NotificationID:
		c = g.notificationID()
	case BeforeInit:
		c = g.beforeInit()
	case Schema:
		c = g.schemaCase()
	}
	c.N, c.Family = g.n, f
	// Every other schema case carries a progress token, without drawing from the seeded
	// stream (the cases stay those of the seed).
	c.Progress = f == Schema && g.n%2 == 0
	return c
}

// pick returns one element of xs.
func pick[T any](g *Generator, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// word returns n random letters and digits: safe in every string, never a template.
func (g *Generator) word(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// params returns p (an object, or "" for none) with the generator's _meta members added.
func (g *Generator) params(p string) string {
	if g.meta == nil {
		return p
	}
	meta := `"_meta":{` + string(g.meta) + `}`
	t := strings.TrimSpace(p)
	switch {
	case t == "":
		return "{" + meta + "}"
	case t == "{}":
		return "{" + meta + "}"
	case strings.HasPrefix(t, "{"):
		return "{" + meta + "," + t[1:]
	}
	return p
}

// request builds a request frame with [IDToken] as its id.
func (g *Generator) request(method, params string) []byte {
	return g.message(`"id":`+IDToken, method, params)
}

// notification builds a notification frame.
func (g *Generator) notification(method, params string) []byte {
	return g.message("", method, params)
}

// message builds `{"jsonrpc":"2.0",<id,>"method":…,"params":…}`; params get the _meta.
func (g *Generator) message(id, method, params string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0",`)
	if id != "" {
		b.WriteString(id)
		b.WriteByte(',')
	}
	b.WriteString(`"method":`)
	b.WriteString(quote(method))
	if p := g.params(params); p != "" {
		b.WriteString(`,"params":`)
		b.WriteString(p)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// quote encodes s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// safeRequest is a request every server may be sent: it reads, or names nothing that exists.
type safeRequest struct{ method, params string }

// safeRequests are the well-formed requests frame families start from.
func safeRequests() []safeRequest {
	return []safeRequest{
		{"ping", ""},
		{"tools/list", "{}"},
		{"resources/list", "{}"},
		{"prompts/list", "{}"},
		{"resources/templates/list", "{}"},
		{"tools/call", `{"name":"mcpspec-fuzz-no-such-tool","arguments":{"text":"fuzz"}}`},
		{"resources/read", `{"uri":"mcpspec-fuzz://no/such/resource"}`},
		{"prompts/get", `{"name":"mcpspec-fuzz-no-such-prompt","arguments":{}}`},
	}
}

// someRequest returns a well-formed request frame.
func (g *Generator) someRequest() ([]byte, string) {
	r := pick(g, safeRequests())
	return g.request(r.method, r.params), r.method
}

func frames(fs ...[]byte) [][]byte { return fs }
