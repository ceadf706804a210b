package collection

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// nodeToValue converts a checked node tree (no aliases, known tags) to the JSON-compatible value
// the schema validates.
func nodeToValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return nodeToValue(n.Content[0])
		}
		return nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeToValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = nodeToValue(c)
		}
		return s
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b
			}
		case "!!int":
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return i
			}
			fallthrough
		case "!!float":
			var f float64
			if n.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f
			}
		}
		return n.Value
	}
	return nil
}

// validateSchema validates the document against schema/collection.v1.json and records each
// violation at the position of the offending value.
func (l *Loader) validateSchema(d *decoder, doc *yaml.Node) {
	err := l.schema.Validate(nodeToValue(doc))
	if err == nil {
		return
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		d.errf(doc, "", "schema validation: %v", err)
		return
	}
	for _, leaf := range schemaLeaves(ve) {
		at := nodeAt(doc, leaf.InstanceLocation)
		msg := leaf.ErrorKind.LocalizedString(message.NewPrinter(language.English))
		if ap, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
			if k := keyNode(at, ap.Properties[0]); k != nil {
				at = k
			}
		}
		loc := "/" + strings.Join(leaf.InstanceLocation, "/")
		d.errs = append(d.errs, &Error{Pos: d.pos(at), Msg: fmt.Sprintf("schema %s: at %s: %s", "collection.v1.json", loc, msg)})
	}
}

// schemaLeaves returns the most specific violations; for anyOf/oneOf it keeps only the branch
// errors that went deepest into the document, which is where the user's mistake usually is.
func schemaLeaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var all []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		all = append(all, schemaLeaves(c)...)
	}
	deepest := 0
	for _, e := range all {
		deepest = max(deepest, len(e.InstanceLocation))
	}
	var out []*jsonschema.ValidationError
	for _, e := range all {
		if len(e.InstanceLocation) == deepest {
			out = append(out, e)
		}
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// nodeAt follows a JSON pointer (already split) through the node tree.
func nodeAt(n *yaml.Node, loc []string) *yaml.Node {
	for _, tok := range loc {
		switch n.Kind {
		case yaml.MappingNode:
			next := firstValue(n, tok)
			if next == nil {
				return n
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) {
				return n
			}
			n = n.Content[i]
		default:
			return n
		}
	}
	return n
}

// keyNode returns the key node of key in mapping n.
func keyNode(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}
