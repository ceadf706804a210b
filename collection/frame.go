package collection

import (
	"encoding/base64"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
)

// Frame is a raw frame (`frame: TEXT` or `frame: {base64: …}`): bytes sent to the server
// exactly as written, never expanded, followed by a ping. The runner passes it when the server
// answers it with well-formed JSON-RPC (an error included) or not at all, and still answers the
// ping — or, for a frame the MCP rules let a server refuse, ends the session without crashing.
// `mcpspec fuzz --save-findings` writes these.
type Frame struct {
	// Data is the frame as sent, without the line break a line transport adds.
	Data []byte
}

// Kind implements [Step]: the subject is a raw request's, the result or the JSON-RPC error.
func (*Frame) Kind() string { return assert.KindRequest }

// Target implements [Step].
func (*Frame) Target() string { return "(frame)" }

func (*Frame) step() {}

// decodeFrame reads `frame: TEXT` or `frame: {text: TEXT}` or `frame: {base64: B64}`.
func (d *decoder) decodeFrame(n *yaml.Node, what string) Step {
	s := &Frame{}
	if n.Kind == yaml.ScalarNode {
		v, _ := d.nonEmpty(n, what+" frame")
		s.Data = []byte(v)
		return s
	}
	fs, ok := d.fields(n, what+" frame", []string{"text", "base64"})
	if !ok {
		return s
	}
	_, hasText := fs["text"]
	_, hasB64 := fs["base64"]
	switch {
	case hasText && hasB64:
		d.errf(n, "", "%s: frame takes text or base64, not both", what)
	case hasText:
		v, _ := d.nonEmpty(fs["text"].val, what+" frame text")
		s.Data = []byte(v)
	case hasB64:
		v, ok := d.nonEmpty(fs["base64"].val, what+" frame base64")
		if ok {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil || len(b) == 0 {
				d.errf(fs["base64"].val, "standard base64 with padding", "%s: frame base64 does not decode to bytes", what)
			}
			s.Data = b
		}
	default:
		d.errf(n, "", "%s: frame needs text or base64", what)
	}
	return s
}
