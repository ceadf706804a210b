package audit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Sandbox is the fenced place an active audit runs a spawned server in: a temporary root
// holding the server's working directory and HOME, a canary file beside them (outside the
// working directory) whose content is a random nonce, and a canary secret for the server's
// environment. Seeing either nonce in a tool's output is proof of path traversal or of
// environment disclosure.
type Sandbox struct {
	// Root is the temporary directory holding everything; Close removes it.
	Root string
	// Dir is the server's working directory (Root/work).
	Dir string
	// Home is the server's HOME (Root/home).
	Home string
	// CanaryPath is the canary file (Root/canary-<nonce>.txt); CanaryNonce its content.
	CanaryPath  string
	CanaryNonce string
	// EnvName and EnvSecret are the canary environment variable and its value.
	EnvName   string
	EnvSecret string
}

// nonce returns n random bytes in hex.
func nonce(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewSandbox creates a sandbox under parent ("" = the system temporary directory).
func NewSandbox(parent string) (*Sandbox, error) {
	root, err := os.MkdirTemp(parent, "mcpspec-audit-")
	if err != nil {
		return nil, fmt.Errorf("create audit sandbox: %w", err)
	}
	s := &Sandbox{Root: root, Dir: filepath.Join(root, "work"), Home: filepath.Join(root, "home"), CanaryNonce: "MCPSPEC-CANARY-" + nonce(12),
		EnvName: "MCPSPEC_AUDIT_CANARY_TOKEN", EnvSecret: "mcpspec-env-canary-" + nonce(12)}
	s.CanaryPath = filepath.Join(root, "canary-"+nonce(6)+".txt")
	for _, d := range []string{s.Dir, s.Home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(root)
			return nil, fmt.Errorf("create audit sandbox: %w", err)
		}
	}
	if err := os.WriteFile(s.CanaryPath, []byte(s.CanaryNonce+"\n"), 0o600); err != nil {
		_ = os.RemoveAll(root)
		return nil, fmt.Errorf("create audit sandbox: %w", err)
	}
	return s, nil
}

// passedEnv are the variables of the caller's environment a sandboxed server still gets: what
// finding programs, decoding text and telling the time need, and nothing that holds a secret.
var passedEnv = []string{"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM",
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "ComSpec", "PATHEXT", "WINDIR", "SystemDrive"}

// Env returns a spawned server's whole environment: from parent (the caller's environment,
// KEY=value entries) only PATH, the locale, TZ, TERM and the Windows system variables; HOME
// (and USERPROFILE, TMPDIR, XDG_CONFIG_HOME) inside the sandbox; and the canary secret. A
// caller's GITHUB_TOKEN or AWS_SECRET_ACCESS_KEY never reaches the server: what it needs is
// passed explicitly (--server-env), after these entries.
func (s *Sandbox) Env(parent []string) []string {
	var out []string
	for _, kv := range parent {
		k, _, ok := strings.Cut(kv, "=")
		if ok && slices.Contains(passedEnv, k) {
			out = append(out, kv)
		}
	}
	tmp := filepath.Join(s.Home, "tmp")
	_ = os.MkdirAll(tmp, 0o700)
	return append(out, "HOME="+s.Home, "USERPROFILE="+s.Home, "TMPDIR="+tmp, "XDG_CONFIG_HOME="+filepath.Join(s.Home, ".config"),
		s.EnvName+"="+s.EnvSecret)
}

// Close removes the sandbox.
func (s *Sandbox) Close() error { return os.RemoveAll(s.Root) }
