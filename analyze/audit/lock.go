package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// LockVersion identifies the lockfile format (schema/tools-lock.v1.json).
const LockVersion = 1

// DefaultLockPath is where the lockfile lives, relative to the repository root.
const DefaultLockPath = ".mcpspec/tools.lock"

// Lock pins what servers said about themselves when they were last reviewed: per server, the
// SHA-256 of each canonical tool, prompt, resource and template definition and of the
// instructions, with the definitions themselves so that a change can be shown field by field.
// It is meant to be committed; [Drift] compares a server against it (rug-pull detection).
type Lock struct {
	LockVersion int                    `json:"lockVersion"`
	Servers     map[string]*ServerLock `json:"servers"`
}

// ServerLock is one server's pinned metadata, keyed by tool/prompt name, resource URI and
// template URI template.
type ServerLock struct {
	ServerName        string                `json:"serverName,omitempty"`
	ServerVersion     string                `json:"serverVersion,omitempty"`
	Instructions      *LockEntry            `json:"instructions,omitempty"`
	Tools             map[string]*LockEntry `json:"tools"`
	Prompts           map[string]*LockEntry `json:"prompts,omitempty"`
	Resources         map[string]*LockEntry `json:"resources,omitempty"`
	ResourceTemplates map[string]*LockEntry `json:"resourceTemplates,omitempty"`
}

// LockEntry is one pinned definition: the SHA-256 of its canonical JSON and the definition.
type LockEntry struct {
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
}

// Canonical encodes a JSON value canonically: object keys sorted, no insignificant whitespace,
// numbers as written, strings escaped minimally (no HTML escaping). Its SHA-256 identifies a
// definition.
func Canonical(raw []byte) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return canonicalValue(v)
}

func canonicalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// entryOf pins one raw definition.
func entryOf(raw []byte) (*LockEntry, error) {
	c, err := Canonical(raw)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c)
	return &LockEntry{SHA256: hex.EncodeToString(sum[:]), Definition: c}, nil
}

// LockServer pins m's metadata. Entries that do not decode are skipped (conformance reports
// them).
func LockServer(m *Metadata) *ServerLock {
	sl := &ServerLock{ServerName: m.ServerInfo.Name, ServerVersion: m.ServerInfo.Version, Tools: map[string]*LockEntry{}}
	if m.Instructions != "" {
		raw, _ := json.Marshal(m.Instructions)
		sl.Instructions, _ = entryOf(raw)
	}
	for _, it := range items(m) {
		if it.bad != nil || it.subject.Kind == KindInstructions {
			continue
		}
		e, err := entryOf(it.raw)
		if err != nil {
			continue
		}
		p := sl.mapFor(it.subject.Kind)
		if *p == nil {
			*p = map[string]*LockEntry{}
		}
		(*p)[it.subject.Name] = e
	}
	return sl
}

// mapFor returns the address of the entry map of a kind (nil for other kinds).
func (sl *ServerLock) mapFor(k Kind) *map[string]*LockEntry {
	switch k {
	case KindTool:
		return &sl.Tools
	case KindPrompt:
		return &sl.Prompts
	case KindResource:
		return &sl.Resources
	case KindTemplate:
		return &sl.ResourceTemplates
	}
	return nil
}

// entries returns the entry map of a kind (nil when absent).
func (sl *ServerLock) entries(k Kind) map[string]*LockEntry {
	if p := sl.mapFor(k); p != nil {
		return *p
	}
	return nil
}

// Set replaces (or adds) the pinned metadata of m's server in the lock.
func (l *Lock) Set(m *Metadata) {
	if l.Servers == nil {
		l.Servers = map[string]*ServerLock{}
	}
	l.LockVersion = LockVersion
	l.Servers[m.Name] = LockServer(m)
}

// MaxLockBytes bounds a lockfile: a larger one is refused, unread.
const MaxLockBytes = 64 << 20

// ReadLock decodes a lockfile.
func ReadLock(r io.Reader) (*Lock, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxLockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read lockfile: %w", err)
	}
	if len(data) > MaxLockBytes {
		return nil, errors.New("read lockfile: larger than 64 MiB")
	}
	var l Lock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("read lockfile: %w", err)
	}
	if l.LockVersion != LockVersion {
		return nil, fmt.Errorf("read lockfile: lockVersion %d is not %d", l.LockVersion, LockVersion)
	}
	return &l, nil
}

// WriteLock writes the lock as indented JSON with sorted keys, so that the same metadata
// always gives the same bytes and a change shows as a small diff in review.
func WriteLock(w io.Writer, l *Lock) error {
	c := *l
	c.LockVersion = LockVersion
	if c.Servers == nil {
		c.Servers = map[string]*ServerLock{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return fmt.Errorf("write lockfile: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// lockKey identifies an entry of the lockfile for line lookup.
func lockKey(server string, kind Kind, name string) string {
	return server + "\x00" + string(kind) + "\x00" + name
}

// maxLockDepth bounds the nesting lockLines follows.
const maxLockDepth = 256

// lockLines maps entries of an encoded lockfile to the line of their key: servers
// (kind ""), the tools/prompts/… members (name ""), and each entry. It reads any valid JSON
// layout, not only the one [WriteLock] produces; it stops quietly at invalid JSON.
func lockLines(data []byte) map[string]int {
	lines := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	// Offsets only grow as the decoder advances: count the newlines incrementally.
	counted, line := 0, 1
	lineAt := func(off int64) int {
		end := min(int(off), len(data))
		if end > counted {
			line += bytes.Count(data[counted:end], []byte{'\n'})
			counted = end
		}
		return line
	}
	record := func(path []string, line int) {
		if len(path) < 2 || path[0] != "servers" {
			return
		}
		switch len(path) {
		case 2:
			lines[lockKey(path[1], "", "")] = line
		case 3:
			if k := kindOfMember(path[2]); k != "" {
				lines[lockKey(path[1], k, "")] = line
			}
		case 4:
			if k := kindOfMember(path[2]); k != "" && k != KindInstructions {
				lines[lockKey(path[1], k, path[3])] = line
			}
		}
	}
	var walk func(path []string) error
	walk = func(path []string) error {
		if len(path) > maxLockDepth {
			return errors.New("too deep")
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		for dec.More() {
			key := "[]"
			if d == '{' {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ = kt.(string)
				record(append(path, key), lineAt(dec.InputOffset()))
			}
			if err := walk(append(path, key)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	_ = walk(nil)
	return lines
}

// kindOfMember maps a ServerLock member name to its kind.
func kindOfMember(k string) Kind {
	switch k {
	case "tools":
		return KindTool
	case "prompts":
		return KindPrompt
	case "resources":
		return KindResource
	case "resourceTemplates":
		return KindTemplate
	case "instructions":
		return KindInstructions
	}
	return ""
}

// Locate sets the Location of every finding that has none: the line of its subject's entry in
// the lockfile (data, found at file), else the line of its server's list, else of the server,
// else line 1. With no lockfile data, the lines are those of the lockfile that
// [WriteLock] would write for metas, so they are right once that file is committed.
func Locate(fs []Finding, file string, data []byte, metas ...*Metadata) {
	if len(bytes.TrimSpace(data)) == 0 {
		l := &Lock{}
		for _, m := range metas {
			l.Set(m)
		}
		var b bytes.Buffer
		_ = WriteLock(&b, l)
		data = b.Bytes()
	}
	lines := lockLines(data)
	for i := range fs {
		f := &fs[i]
		if f.Location != nil {
			continue
		}
		s := f.Subject
		line := 1
		for _, k := range []string{lockKey(s.Server, s.Kind, s.Name), lockKey(s.Server, s.Kind, ""), lockKey(s.Server, "", "")} {
			if n, ok := lines[k]; ok {
				line = n
				break
			}
		}
		f.Location = &Location{File: file, Line: line}
	}
}
