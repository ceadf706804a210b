package mcptest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// resource is one static resource.
type resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType"`

	text string
	blob string // base64
}

// pixelPNG is a 1×1 transparent PNG.
const pixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

// ItemTemplate is the URI template of the item resources; id is [A-Za-z0-9_-]{1,64}.
const ItemTemplate = "mcptest://items/{id}"

var itemURI = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcptest://items/([A-Za-z0-9_-]{1,64})$`) })

func resources() []*resource {
	return []*resource{
		{URI: "mcptest://static/hello.txt", Name: "hello.txt", Title: "Hello", Description: "A short greeting.", MimeType: "text/plain", text: "Hello from mcptest.\n"},
		{URI: "mcptest://static/readme.md", Name: "readme.md", Title: "Readme", Description: "What this server is.", MimeType: "text/markdown",
			text: "# mcptest\n\nThe reference MCP server of mcpspec.\n"},
		{URI: "mcptest://static/pixel.png", Name: "pixel.png", Title: "Pixel", Description: "A 1x1 transparent PNG (blob).", MimeType: "image/png", blob: pixelPNG},
	}
}

func (b *Backend) listResources(c *call) (any, *rpcError) {
	list, next, err := page(b.resources(), c.req.Params, b.opts.PageSize, "resources")
	if err != nil {
		return nil, err
	}
	res := map[string]any{"resources": list}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

func (b *Backend) listTemplates(_ *call) (any, *rpcError) {
	return map[string]any{"resourceTemplates": []map[string]any{{
		"uriTemplate": ItemTemplate, "name": "item", "title": "Item",
		"description": "One item by id, as JSON.", "mimeType": "application/json",
	}}}, nil
}

// resources returns the static resources this backend serves: [Options.HostileHTML] adds one.
func (b *Backend) resources() []*resource {
	all := resources()
	if b.opts.HostileHTML {
		all = append(all, hostileHTMLResource())
	}
	return all
}

// lookupResource returns the contents entry for uri, or false.
func (b *Backend) lookupResource(uri string) (map[string]any, bool) {
	for _, r := range b.resources() {
		if r.URI != uri {
			continue
		}
		entry := map[string]any{"uri": r.URI, "mimeType": r.MimeType}
		if r.blob != "" {
			entry["blob"] = r.blob
		} else {
			entry["text"] = r.text
		}
		return entry, true
	}
	if m := itemURI().FindStringSubmatch(uri); m != nil {
		body, _ := json.Marshal(map[string]string{"id": m[1], "name": "item " + m[1]})
		return map[string]any{"uri": uri, "mimeType": "application/json", "text": string(body)}, true
	}
	return nil, false
}

func (b *Backend) resourceURI(c *call) (string, map[string]any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return "", nil, err
	}
	if p.URI == "" {
		return "", nil, newError(CodeInvalidParams, "missing params.uri")
	}
	entry, ok := b.lookupResource(p.URI)
	if !ok {
		code := CodeResourceNotFound
		if c.stateless {
			code = CodeInvalidParams
		}
		return "", nil, &rpcError{Code: code, Message: "resource not found: " + p.URI, Data: map[string]any{"uri": p.URI}}
	}
	return p.URI, entry, nil
}

func (b *Backend) readResource(c *call) (any, *rpcError) {
	_, entry, err := b.resourceURI(c)
	if err != nil {
		return nil, err
	}
	return map[string]any{"contents": []any{entry}}, nil
}

// subscribe accepts the subscription and at once sends one notifications/resources/updated, so
// a client can observe the notification path without waiting for a change.
func (b *Backend) subscribe(c *call) (any, *rpcError) {
	uri, _, err := b.resourceURI(c)
	if err != nil {
		return nil, err
	}
	_ = c.peer.notify(c.ctx, "notifications/resources/updated", map[string]any{"uri": uri})
	return map[string]any{}, nil
}

// greetNames are the completion candidates for greet's name argument.
var greetNames = []string{"Ada", "Alan", "Barbara", "Grace", "Linus", "Margaret"}

func prompts() []map[string]any {
	return []map[string]any{{
		"name": "greet", "title": "Greet", "description": "Asks the model to greet someone.",
		"arguments": []map[string]any{
			{"name": "name", "description": "Who to greet.", "required": true},
			{"name": "style", "description": "How: warm (default) or formal.", "required": false},
		},
	}}
}

func (b *Backend) listPrompts(c *call) (any, *rpcError) {
	list, next, err := page(prompts(), c.req.Params, b.opts.PageSize, "prompts")
	if err != nil {
		return nil, err
	}
	res := map[string]any{"prompts": list}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

func (b *Backend) getPrompt(c *call) (any, *rpcError) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	if p.Name != "greet" {
		return nil, newError(CodeInvalidParams, "unknown prompt %q", p.Name)
	}
	name := p.Arguments["name"]
	if name == "" {
		return nil, newError(CodeInvalidParams, "prompt greet: missing required argument \"name\"")
	}
	style := p.Arguments["style"]
	if style == "" {
		style = "warm"
	}
	return map[string]any{
		"description": "Greet " + name,
		"messages": []map[string]any{{
			"role":    "user",
			"content": map[string]any{"type": "text", "text": fmt.Sprintf("Please greet %s in a %s way.", name, style)},
		}},
	}, nil
}

func (b *Backend) complete(c *call) (any, *rpcError) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	var candidates []string
	switch {
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "name":
		candidates = greetNames
	case p.Ref.Type == "ref/prompt" && p.Ref.Name == "greet" && p.Argument.Name == "style":
		candidates = []string{"formal", "warm"}
	case p.Ref.Type == "ref/resource" && p.Ref.URI == ItemTemplate && p.Argument.Name == "id":
		candidates = []string{"1", "2", "3", "42"}
	default:
		return nil, newError(CodeInvalidParams, "no completion for ref %s %q argument %q", p.Ref.Type, p.Ref.Name+p.Ref.URI, p.Argument.Name)
	}
	values := []string{}
	for _, v := range candidates {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
			values = append(values, v)
		}
	}
	return map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}}, nil
}

// page cuts one page out of items after the cursor in params. size <= 0 means one page.
// Cursors are opaque to clients: base64url("mcptest/<kind>/<offset>").
func page[T any](items []T, params json.RawMessage, size int, kind string) ([]T, string, *rpcError) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := unmarshalParams(params, &p); err != nil {
		return nil, "", err
	}
	offset := 0
	if p.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		rest, ok := strings.CutPrefix(string(raw), "mcptest/"+kind+"/")
		n, convErr := strconv.Atoi(rest)
		if err != nil || !ok || convErr != nil || n <= 0 || n > len(items) {
			return nil, "", newError(CodeInvalidParams, "invalid cursor %q", *p.Cursor)
		}
		offset = n
	}
	if size <= 0 {
		return items[offset:], "", nil
	}
	end := min(offset+size, len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte("mcptest/" + kind + "/" + strconv.Itoa(end)))
	}
	return items[offset:end], next, nil
}
