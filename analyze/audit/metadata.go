package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpspec/mcpspec/session"
)

// MetadataVersion identifies the JSON shape of [Metadata] files (schema/audit-metadata.v1.json).
const MetadataVersion = "1"

// Metadata is everything a server says about itself without running anything: its identity,
// instructions and the raw entries of tools/list, prompts/list, resources/list and
// resources/templates/list, kept exactly as the server sent them so every string is audited.
type Metadata struct {
	// Version is [MetadataVersion] in a file; empty in memory is fine.
	Version string `json:"metadataVersion,omitempty"`
	// Name identifies the server in findings and the lockfile; [Collect] fills it from
	// serverInfo.name (else "server"). Callers may set their own.
	Name string `json:"name"`
	// ServerInfo is the server's serverInfo.
	ServerInfo session.Implementation `json:"serverInfo"`
	// ProtocolVersion is the negotiated protocol version, "" when unknown.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Instructions is the server's instructions string.
	Instructions string `json:"instructions,omitempty"`
	// Tools, Prompts, Resources and ResourceTemplates are the list entries as sent.
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts,omitempty"`
	Resources         []json.RawMessage `json:"resources,omitempty"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates,omitempty"`
}

// Lister is what [Collect] needs of a session; *session.Session implements it.
type Lister interface {
	ServerInfo() session.Implementation
	ProtocolVersion() string
	Instructions() string
	ServerCapabilities() json.RawMessage
	ListTools(ctx context.Context) ([]session.Tool, error)
	ListPrompts(ctx context.Context) ([]session.Prompt, error)
	ListResources(ctx context.Context) ([]session.Resource, error)
	ListResourceTemplates(ctx context.Context) ([]session.ResourceTemplate, error)
}

var _ Lister = (*session.Session)(nil)

// Collect reads a server's metadata through list requests only: tools always, prompts and
// resources (and templates) when the server declares those capabilities. It never calls a tool,
// reads a resource or gets a prompt. A list method the server declares but answers with
// "method not found" is skipped; any other failure is returned, naming the method.
func Collect(ctx context.Context, s Lister) (*Metadata, error) {
	info := s.ServerInfo()
	m := &Metadata{Name: info.Name, ServerInfo: info, ProtocolVersion: s.ProtocolVersion(), Instructions: s.Instructions()}
	if m.Name == "" {
		m.Name = "server"
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("collect metadata: tools/list: %w", err)
	}
	m.Tools = make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		m.Tools = append(m.Tools, rawOr(t.Raw, t))
	}
	caps := declared(s.ServerCapabilities())
	if caps["prompts"] {
		ps, err := s.ListPrompts(ctx)
		if err = optional(err); err != nil {
			return nil, fmt.Errorf("collect metadata: prompts/list: %w", err)
		}
		for _, p := range ps {
			m.Prompts = append(m.Prompts, rawOr(p.Raw, p))
		}
	}
	if caps["resources"] {
		rs, err := s.ListResources(ctx)
		if err = optional(err); err != nil {
			return nil, fmt.Errorf("collect metadata: resources/list: %w", err)
		}
		for _, r := range rs {
			m.Resources = append(m.Resources, rawOr(r.Raw, r))
		}
		ts, err := s.ListResourceTemplates(ctx)
		if err = optional(err); err != nil {
			return nil, fmt.Errorf("collect metadata: resources/templates/list: %w", err)
		}
		for _, t := range ts {
			m.ResourceTemplates = append(m.ResourceTemplates, rawOr(t.Raw, t))
		}
	}
	return m, nil
}

// optional forgives "method not found" (-32601): a server may declare a capability and still
// not implement one of its list methods.
func optional(err error) error {
	var se *session.Error
	if errors.As(err, &se) && se.Code == -32601 {
		return nil
	}
	return err
}

// declared returns the top-level capability names of a capabilities object.
func declared(raw json.RawMessage) map[string]bool {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(raw, &caps)
	out := make(map[string]bool, len(caps))
	for k, v := range caps {
		out[k] = string(bytes.TrimSpace(v)) != "null"
	}
	return out
}

// rawOr returns raw, or v encoded when raw is empty (a value built in memory).
func rawOr(raw json.RawMessage, v any) json.RawMessage {
	if len(raw) > 0 {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// MaxMetadataBytes bounds a metadata file read by [ReadMetadata].
const MaxMetadataBytes = 64 << 20

// ReadMetadata decodes a metadata document (as written by [WriteMetadata] or `mcpspec audit
// --save-metadata`). A bare tools/list result ({"tools": [...]}) is accepted too.
func ReadMetadata(r io.Reader) (*Metadata, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxMetadataBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	if len(data) > MaxMetadataBytes {
		return nil, fmt.Errorf("read metadata: larger than %d MiB", MaxMetadataBytes>>20)
	}
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	if m.Version != "" && m.Version != MetadataVersion {
		return nil, fmt.Errorf("read metadata: metadataVersion %q is not %q", m.Version, MetadataVersion)
	}
	if m.Name == "" {
		m.Name = m.ServerInfo.Name
	}
	if m.Name == "" {
		m.Name = "server"
	}
	return &m, nil
}

// WriteMetadata writes m as indented JSON with [MetadataVersion] set.
func WriteMetadata(w io.Writer, m *Metadata) error {
	c := *m
	c.Version = MetadataVersion
	if c.Tools == nil {
		c.Tools = []json.RawMessage{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return fmt.Errorf("write metadata: %w", err)
	}
	return nil
}
