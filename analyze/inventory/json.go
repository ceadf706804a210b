package inventory

import (
	"encoding/json"
	"fmt"

	"github.com/mcpspec/mcpspec/session"
)

// wire is the JSON form of an Inventory: the lists hold each entry as the server sent it.
type wire struct {
	ProtocolVersion string                  `json:"protocolVersion,omitempty"`
	ServerInfo      *session.Implementation `json:"serverInfo,omitempty"`
	Instructions    string                  `json:"instructions,omitempty"`
	Capabilities    json.RawMessage         `json:"capabilities,omitempty"`
	Tools           []json.RawMessage       `json:"tools"`
	Prompts         []json.RawMessage       `json:"prompts,omitempty"`
	Resources       []json.RawMessage       `json:"resources,omitempty"`
	Templates       []json.RawMessage       `json:"resourceTemplates,omitempty"`
}

// MarshalJSON writes the inventory with every tool, prompt, resource and template as the
// server sent it.
func (inv *Inventory) MarshalJSON() ([]byte, error) {
	w := wire{
		ProtocolVersion: inv.ProtocolVersion,
		ServerInfo:      &inv.ServerInfo,
		Instructions:    inv.Instructions,
		Capabilities:    inv.Capabilities,
		Tools:           make([]json.RawMessage, 0, len(inv.Tools)),
	}
	for i := range inv.Tools {
		raw, err := rawOf(inv.Tools[i].Raw, &inv.Tools[i])
		if err != nil {
			return nil, err
		}
		w.Tools = append(w.Tools, raw)
	}
	for i := range inv.Prompts {
		raw, err := rawOf(inv.Prompts[i].Raw, &inv.Prompts[i])
		if err != nil {
			return nil, err
		}
		w.Prompts = append(w.Prompts, raw)
	}
	for i := range inv.Resources {
		raw, err := rawOf(inv.Resources[i].Raw, &inv.Resources[i])
		if err != nil {
			return nil, err
		}
		w.Resources = append(w.Resources, raw)
	}
	for i := range inv.Templates {
		raw, err := rawOf(inv.Templates[i].Raw, &inv.Templates[i])
		if err != nil {
			return nil, err
		}
		w.Templates = append(w.Templates, raw)
	}
	return json.Marshal(w)
}

func rawOf(raw json.RawMessage, v any) (json.RawMessage, error) {
	if len(raw) > 0 {
		return raw, nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads an inventory. It accepts what [Inventory.MarshalJSON] writes, the JSON
// output of `mcpspec tools --json`, and a bare tools/list result ({"tools": [...]}).
func (inv *Inventory) UnmarshalJSON(data []byte) error {
	var w wire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*inv = Inventory{ProtocolVersion: w.ProtocolVersion, Instructions: w.Instructions, Capabilities: w.Capabilities}
	if w.ServerInfo != nil {
		inv.ServerInfo = *w.ServerInfo
	}
	var err error
	if inv.Tools, err = decodeAll(w.Tools, "tool", func(t *session.Tool, raw json.RawMessage) { t.Raw = raw }); err != nil {
		return err
	}
	if inv.Prompts, err = decodeAll(w.Prompts, "prompt", func(p *session.Prompt, raw json.RawMessage) { p.Raw = raw }); err != nil {
		return err
	}
	if inv.Resources, err = decodeAll(w.Resources, "resource", func(r *session.Resource, raw json.RawMessage) { r.Raw = raw }); err != nil {
		return err
	}
	inv.Templates, err = decodeAll(w.Templates, "resource template", func(r *session.ResourceTemplate, raw json.RawMessage) { r.Raw = raw })
	return err
}

func decodeAll[T any](raws []json.RawMessage, what string, setRaw func(*T, json.RawMessage)) ([]T, error) {
	var out []T
	for i, raw := range raws {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i+1, err)
		}
		setRaw(&v, raw)
		out = append(out, v)
	}
	return out, nil
}
