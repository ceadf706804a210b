package collection

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/internal/protocol"
)

// topKeys are the keys a collection may have.
var topKeys = []string{"schemaVersion", "name", "description", "server", "servers", "variables",
	"environments", "defaultEnvironment", "defaults", "tests", "load", "deadlock", "race", "head-of-line", "fuzz", "probe", "audit",
	"tokens", "score", "retrieval", "client"}

// blockKeys are the top-level blocks that run without tests: a collection needs tests or one
// of them.
var blockKeys = []string{"load", "deadlock", "race", "head-of-line", "fuzz", "probe", "audit", "tokens", "score", "retrieval"}

// supportedSchemaVersions are accepted values of schemaVersion.
var supportedSchemaVersions = []string{"1", "1.0"}

// transports lists the accepted transport names.
var transports = []string{TransportStdio, TransportHTTP, TransportSSE, TransportWS, TransportTCP, TransportTestServer}

// decodeCollection decodes the root mapping. The returned collection is partial when errors
// were recorded.
func (d *decoder) decodeCollection(root *yaml.Node) *Collection {
	c := &Collection{File: d.file, Servers: map[string]*Server{}, Environments: map[string]*Environment{}}
	fs, ok := d.fields(root, "the collection", topKeys)
	if !ok {
		return c
	}
	if f, ok := fs["schemaVersion"]; ok {
		if v, ok := d.str(f.val, "schemaVersion"); ok {
			if !has(supportedSchemaVersions, v) {
				d.errf(f.val, `this mcpspec reads schemaVersion "1.0"`, "unsupported schemaVersion %q", v)
			}
			c.SchemaVersion = v
		}
	}
	if f, ok := fs["name"]; ok {
		c.Name, _ = d.str(f.val, "name")
	}
	if f, ok := fs["description"]; ok {
		c.Description, _ = d.str(f.val, "description")
	}
	d.decodeServers(fs, c)
	if f, ok := fs["variables"]; ok {
		c.Variables, _ = d.object(f.val, "variables")
	}
	if f, ok := fs["environments"]; ok {
		d.decodeEnvironments(f.val, c)
	}
	if f, ok := fs["defaultEnvironment"]; ok {
		if v, ok := d.str(f.val, "defaultEnvironment"); ok {
			c.DefaultEnvironment = v
			if _, exists := c.Environments[v]; !exists {
				d.errf(f.val, suggest(v, slices.Sorted(maps.Keys(c.Environments))), "defaultEnvironment %q is not defined in environments", v)
			}
		}
	}
	if f, ok := fs["defaults"]; ok {
		d.decodeDefaults(f.val, &c.Defaults)
	}
	if f, ok := fs["client"]; ok {
		c.Client = d.decodeClient(f.val, nil, "the collection's")
	}
	// Servers and defaults are known: pick the default server.
	d.pickDefaultServer(fs["defaults"].val, c)
	if len(c.Servers) == 0 {
		d.errf(root, `add "server: <command>" or "server: testserver"`, "the collection defines no server")
	}
	if f, ok := fs["tests"]; ok {
		d.decodeTests(f.val, c)
	} else if !slices.ContainsFunc(blockKeys, func(k string) bool { return fs[k].val != nil }) {
		d.errf(root, `add a "tests:" list`, "the collection has no tests")
	}
	if f, ok := fs["load"]; ok {
		c.Load = d.decodeLoad(f.val)
	}
	if f, ok := fs["deadlock"]; ok {
		c.Deadlock = d.decodeDeadlock(f.val, c)
	}
	if f, ok := fs["race"]; ok {
		c.Race = d.decodeRace(f.val, c)
	}
	if f, ok := fs["head-of-line"]; ok {
		c.HeadOfLine = d.decodeHeadOfLine(f.val, c)
	}
	if f, ok := fs["fuzz"]; ok {
		c.Fuzz = d.decodeFuzz(f.val, c)
	}
	if f, ok := fs["probe"]; ok {
		c.Probe = d.decodeProbe(f.val)
	}
	if f, ok := fs["audit"]; ok {
		c.Audit = d.decodeAudit(f.val, c)
	}
	if f, ok := fs["tokens"]; ok {
		c.Tokens = d.decodeTokens(f.val, c)
	}
	if f, ok := fs["score"]; ok {
		c.Score = d.decodeScore(f.val, c)
	}
	if f, ok := fs["retrieval"]; ok {
		c.Retrieval = d.decodeRetrieval(f.val, c)
	}
	return c
}

// decodeServers reads `server:` (the server named "default") and the `servers:` mapping into
// c.Servers.
func (d *decoder) decodeServers(fs map[string]field, c *Collection) {
	if f, ok := fs["server"]; ok {
		if s := d.decodeServer(f.val, DefaultServerName); s != nil {
			c.Servers[DefaultServerName] = s
		}
	}
	if f, ok := fs["servers"]; ok {
		if sfs, ok := d.fields(f.val, "servers", nil); ok {
			for name, sf := range sfs {
				if _, dup := c.Servers[name]; dup {
					d.errf(sf.key, `the top-level "server" is named "default"`, "server %q is defined twice", name)
					continue
				}
				if s := d.decodeServer(sf.val, name); s != nil {
					c.Servers[name] = s
				}
			}
		}
	}
}

// decodeEnvironments reads the `environments:` mapping into c.Environments.
func (d *decoder) decodeEnvironments(n *yaml.Node, c *Collection) {
	efs, ok := d.fields(n, "environments", nil)
	if !ok {
		return
	}
	for name, ef := range efs {
		env := &Environment{Name: name, Pos: d.pos(ef.key), Variables: map[string]any{}}
		if vfs, ok := d.fields(ef.val, fmt.Sprintf("environment %q", name), []string{"variables", "description"}); ok {
			if vf, ok := vfs["variables"]; ok {
				env.Variables, _ = d.object(vf.val, fmt.Sprintf("variables of environment %q", name))
			}
			if df, ok := vfs["description"]; ok {
				d.str(df.val, "description")
			}
		}
		c.Environments[name] = env
	}
}

// pickDefaultServer sets c.DefaultServer: defaults.server (defaults is its node, for the error
// position), else the server named "default", else the only server.
func (d *decoder) pickDefaultServer(defaults *yaml.Node, c *Collection) {
	switch {
	case c.Defaults.Server != "":
		c.DefaultServer = c.Defaults.Server
		if len(References(c.Defaults.Server)) > 0 {
			d.defaultsServer = defaults // checked once the variables are known
			return
		}
		if _, ok := c.Servers[c.Defaults.Server]; !ok {
			d.errf(defaults, suggest(c.Defaults.Server, slices.Sorted(maps.Keys(c.Servers))), "defaults.server %q is not defined", c.Defaults.Server)
		}
	case c.Servers[DefaultServerName] != nil:
		c.DefaultServer = DefaultServerName
	case len(c.Servers) == 1:
		for name := range c.Servers {
			c.DefaultServer = name
		}
	}
}

// serverKeys are the keys of a server mapping.
var serverKeys = []string{"name", "transport", "command", "args", "env", "cwd", "url", "headers", "timeouts", "protocolVersion", "maxMessageSize"}

// decodeServer reads a server given as a command string or a mapping.
func (d *decoder) decodeServer(n *yaml.Node, name string) *Server {
	s := &Server{Name: name, Pos: d.pos(n)}
	what := fmt.Sprintf("server %q", name)
	if n.Kind == yaml.ScalarNode {
		str, ok := d.nonEmpty(n, what)
		if !ok {
			return nil
		}
		if err := parseServerString(str, s); err != nil {
			d.errf(n, "", "%s: %v", what, err)
			return nil
		}
		if len(References(str)) > 0 {
			// "{{spec}}" may hold a URL or a command line: classify it once expanded.
			d.noteRefs(str, n)
			if d.templated == nil {
				d.templated = map[*Server]templated{}
			}
			d.templated[s] = templated{text: str, node: n}
		}
		return s
	}
	fs, ok := d.fields(n, what, serverKeys)
	if !ok {
		return nil
	}
	if f, ok := fs["name"]; ok {
		if v, ok := d.str(f.val, "server name"); ok && name == DefaultServerName {
			s.Name = v
		}
	}
	if f, ok := fs["command"]; ok {
		s.Command, _ = d.nonEmpty(f.val, what+" command")
	}
	if f, ok := fs["args"]; ok {
		s.Args, _ = d.strList(f.val, what+" args")
	}
	if f, ok := fs["env"]; ok {
		s.Env, _ = d.strMap(f.val, what+" env")
	}
	if f, ok := fs["cwd"]; ok {
		s.Cwd, _ = d.str(f.val, what+" cwd")
	}
	if f, ok := fs["url"]; ok {
		s.URL, _ = d.nonEmpty(f.val, what+" url")
	}
	if f, ok := fs["headers"]; ok {
		s.Headers, _ = d.strMap(f.val, what+" headers")
	}
	if f, ok := fs["protocolVersion"]; ok {
		if v, ok := d.str(f.val, what+" protocolVersion"); ok {
			if versions := protocol.SupportedVersions(); !has(versions, v) {
				d.errf(f.val, suggest(v, versions), "%s: unknown protocolVersion %q (one of %s)", what, v, strings.Join(versions, ", "))
			} else {
				s.ProtocolVersion = v
			}
		}
	}
	if f, ok := fs["maxMessageSize"]; ok {
		s.MaxMessageSize, _ = d.size(f.val, what+" maxMessageSize")
	}
	if f, ok := fs["timeouts"]; ok {
		if tfs, ok := d.fields(f.val, what+" timeouts", []string{"connect", "call", "shutdown"}); ok {
			if t, ok := tfs["connect"]; ok {
				s.Timeouts.Connect, _ = d.duration(t.val, "timeouts.connect")
			}
			if t, ok := tfs["call"]; ok {
				s.Timeouts.Call, _ = d.duration(t.val, "timeouts.call")
			}
			if t, ok := tfs["shutdown"]; ok {
				s.Timeouts.Shutdown, _ = d.duration(t.val, "timeouts.shutdown")
			}
		}
	}
	if f, ok := fs["transport"]; ok {
		if v, ok := d.str(f.val, what+" transport"); ok {
			if !has(transports, v) {
				d.errf(f.val, suggest(v, transports), "%s: unknown transport %q (one of %s)", what, v, strings.Join(transports, ", "))
				return nil
			}
			s.Transport = v
		}
	} else {
		s.Transport = inferTransport(s)
	}
	// A command with spaces and no args is split like a shell would (quotes respected).
	if s.Command != "" && len(s.Args) == 0 && strings.ContainsAny(s.Command, " \t") {
		words, err := splitCommand(s.Command)
		if err != nil {
			d.errf(fs["command"].val, "", "%s command: %v", what, err)
			return nil
		}
		s.Command, s.Args = words[0], words[1:]
	}
	d.checkServer(n, fs, s, what)
	return s
}

// inferTransport picks a transport from what a server mapping gives.
func inferTransport(s *Server) string {
	switch {
	case s.URL == "":
		return TransportStdio
	case strings.HasPrefix(s.URL, "ws://"), strings.HasPrefix(s.URL, "wss://"):
		return TransportWS
	case strings.HasPrefix(s.URL, "tcp://"):
		return TransportTCP
	default:
		return TransportHTTP
	}
}

// checkServer checks that the keys given fit the transport.
func (d *decoder) checkServer(n *yaml.Node, fs map[string]field, s *Server, what string) {
	at := func(key string) *yaml.Node {
		if f, ok := fs[key]; ok {
			return f.key
		}
		return n
	}
	switch s.Transport {
	case TransportStdio:
		if s.Command == "" {
			d.errf(n, `add "command:"`, "%s: a stdio server needs a command", what)
		}
		if s.URL != "" {
			d.errf(at("url"), "", "%s: a stdio server takes no url", what)
		}
	case TransportTestServer:
		if s.Command != "" || s.URL != "" {
			d.errf(at("command"), `pass testserver flags in "args"`, "%s: the testserver takes no command or url", what)
		}
	default:
		if s.URL == "" {
			d.errf(n, `add "url:"`, "%s: a %s server needs a url", what, s.Transport)
			return
		}
		if s.Command != "" {
			d.errf(at("command"), "", "%s: a %s server takes no command", what, s.Transport)
		}
		if s.Transport != TransportTCP && !strings.Contains(s.URL, "{{") {
			u, err := url.Parse(s.URL)
			if err != nil || u.Host == "" {
				d.errf(fs["url"].val, "", "%s: invalid url %q", what, s.URL)
			}
		}
	}
}

// resolveTemplates classifies the string-form servers written with variables ("{{spec}}", so
// an environment can switch between a local command and a URL) and names the default server
// of a templated defaults.server, with the load-time variables. An undefined variable is left
// to validate, which reports every one.
func (d *decoder) resolveTemplates(c *Collection, vars *Vars) {
	for s, tm := range d.templated {
		str, err := vars.ExpandString(tm.text)
		if err != nil {
			continue
		}
		r := &Server{Name: s.Name, Pos: s.Pos}
		if err := parseServerString(str, r); err != nil {
			d.errf(tm.node, "", "server %q (after its variables are expanded): %v", s.Name, err)
			continue
		}
		s.Transport, s.Command, s.Args, s.URL = r.Transport, r.Command, r.Args, r.URL
	}
	if d.defaultsServer != nil {
		name, err := vars.ExpandString(c.Defaults.Server)
		if err != nil {
			return
		}
		written := c.Defaults.Server
		c.Defaults.Server, c.DefaultServer = name, name
		if _, ok := c.Servers[name]; !ok {
			d.errf(d.defaultsServer, suggest(name, slices.Sorted(maps.Keys(c.Servers))), "defaults.server %q (from %q) is not defined", name, written)
		}
	}
}

// parseServerString reads the simple form: a command line, an http(s):// or ws(s):// URL, a
// tcp://host:port address, or "testserver [flags…]".
func parseServerString(str string, s *Server) error {
	str = strings.TrimSpace(str)
	switch {
	case strings.HasPrefix(str, "http://"), strings.HasPrefix(str, "https://"):
		s.Transport, s.URL = TransportHTTP, str
		return nil
	case strings.HasPrefix(str, "ws://"), strings.HasPrefix(str, "wss://"):
		s.Transport, s.URL = TransportWS, str
		return nil
	case strings.HasPrefix(str, "tcp://"):
		s.Transport, s.URL = TransportTCP, str
		return nil
	}
	words, err := splitCommand(str)
	if err != nil {
		return err
	}
	if words[0] == TransportTestServer {
		s.Transport, s.Args = TransportTestServer, words[1:]
		return nil
	}
	s.Transport, s.Command, s.Args = TransportStdio, words[0], words[1:]
	return nil
}

// splitCommand splits a command line into words: whitespace separates, single quotes keep
// everything, double quotes keep everything but \" and \\, a backslash outside quotes escapes the
// next character. No expansion of any kind happens.
func splitCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if escaped {
		return nil, fmt.Errorf("trailing backslash in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}

// decodeDefaults reads the defaults block.
func (d *decoder) decodeDefaults(n *yaml.Node, def *Defaults) {
	fs, ok := d.fields(n, "defaults", []string{"timeout", "retries", "server", "tags"})
	if !ok {
		return
	}
	if f, ok := fs["timeout"]; ok {
		def.Timeout, _ = d.duration(f.val, "defaults.timeout")
	}
	if f, ok := fs["retries"]; ok {
		r, _ := d.integer(f.val, "defaults.retries", 0, MaxRetries)
		def.Retries = int(r)
	}
	if f, ok := fs["server"]; ok {
		def.Server, _ = d.nonEmpty(f.val, "defaults.server")
	}
	if f, ok := fs["tags"]; ok {
		def.Tags, _ = d.strList(f.val, "defaults.tags")
	}
}
