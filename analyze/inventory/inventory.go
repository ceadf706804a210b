package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpspec/mcpspec/session"
)

// Inventory is what one server offers, each list in the order the server sent it.
type Inventory struct {
	ProtocolVersion string                 `json:"protocolVersion,omitempty"`
	ServerInfo      session.Implementation `json:"serverInfo"`
	Instructions    string                 `json:"instructions,omitempty"`
	// Capabilities is the capabilities object the server declared, as sent.
	Capabilities json.RawMessage            `json:"capabilities,omitempty"`
	Tools        []session.Tool             `json:"-"`
	Prompts      []session.Prompt           `json:"-"`
	Resources    []session.Resource         `json:"-"`
	Templates    []session.ResourceTemplate `json:"-"`
}

// Collect lists everything s's server offers. Prompts, resources and templates are listed only
// when the server declared the capability; a list the server answers with -32601 (method not
// found) is left empty. Any other failure is returned, wrapped with the method's name.
func Collect(ctx context.Context, s *session.Session) (*Inventory, error) {
	inv := &Inventory{
		ProtocolVersion: s.ProtocolVersion(),
		ServerInfo:      s.ServerInfo(),
		Instructions:    s.Instructions(),
		Capabilities:    s.ServerCapabilities(),
	}
	var err error
	if inv.Tools, err = list(ctx, inv, "tools", s.ListTools); err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	if inv.Prompts, err = list(ctx, inv, "prompts", s.ListPrompts); err != nil {
		return nil, fmt.Errorf("prompts/list: %w", err)
	}
	if inv.Resources, err = list(ctx, inv, "resources", s.ListResources); err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	if inv.Templates, err = list(ctx, inv, "resources", s.ListResourceTemplates); err != nil {
		return nil, fmt.Errorf("resources/templates/list: %w", err)
	}
	return inv, nil
}

// list calls fn when the server declared capability (or declared no capabilities at all, as
// some servers do); method not found leaves the list empty.
func list[T any](ctx context.Context, inv *Inventory, capability string, fn func(context.Context) ([]T, error)) ([]T, error) {
	if !inv.Declares(capability) {
		return nil, nil
	}
	items, err := fn(ctx)
	var se *session.Error
	if errors.As(err, &se) && se.Code == -32601 {
		return nil, nil
	}
	return items, err
}

// Declares reports whether the server declared capability (a top-level member of its
// capabilities object). A server that sent no capabilities object is taken to offer tools only.
func (inv *Inventory) Declares(capability string) bool {
	caps := bytes.TrimSpace(inv.Capabilities)
	if len(caps) == 0 || string(caps) == "null" {
		return capability == "tools"
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return false
	}
	v, ok := m[capability]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

// Tool returns the tool named name, or nil.
func (inv *Inventory) Tool(name string) *session.Tool {
	for i := range inv.Tools {
		if inv.Tools[i].Name == name {
			return &inv.Tools[i]
		}
	}
	return nil
}
