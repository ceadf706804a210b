package audit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	// Roots are the server's allowed roots with their containment canaries: the working
	// directory always, and what [Sandbox.Contain] adds.
	Roots []ContainmentRoot
	// planted are the paths Contain created outside Root, removed by Close.
	planted []string
}

// ContainmentRoot is one allowed root of a server and the canaries that test its containment:
// a prefix sibling (a directory beside the root whose name starts with the root's, the 2025
// filesystem-server advisory) and a symlink inside the root pointing out. Each canary
// directory holds canary.txt, whose content is the sandbox's nonce.
type ContainmentRoot struct {
	Root string `json:"root"`
	// Sibling is Root + "_mcpspec-<nonce>", beside Root.
	Sibling string `json:"sibling"`
	// Link is Root/mcpspec-link-<nonce>, a symlink to a directory outside Root ("" when
	// symlinks cannot be made).
	Link string `json:"link,omitempty"`
}

// CanaryFile is the name of the canary file in a containment canary directory.
const CanaryFile = "canary.txt"

// Contain plants the containment canaries of each root (absolute, existing directories; "/"
// and duplicates are skipped) and adds the roots to s.Roots. What it creates beside and inside
// the roots is removed by Close; nothing existing is overwritten.
func (s *Sandbox) Contain(roots ...string) error {
	for _, r := range roots {
		r = filepath.Clean(r)
		if !filepath.IsAbs(r) || r == filepath.Dir(r) || slices.ContainsFunc(s.Roots, func(c ContainmentRoot) bool { return c.Root == r }) {
			continue
		}
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			continue
		}
		tag := nonce(4)
		c := ContainmentRoot{Root: r, Sibling: r + "_mcpspec-" + tag}
		if err := os.Mkdir(c.Sibling, 0o700); err != nil {
			return fmt.Errorf("plant containment canaries beside %s: %w", r, err)
		}
		s.planted = append(s.planted, c.Sibling)
		if err := os.WriteFile(filepath.Join(c.Sibling, CanaryFile), []byte(s.CanaryNonce+"\n"), 0o600); err != nil {
			return fmt.Errorf("plant containment canaries beside %s: %w", r, err)
		}
		out := filepath.Join(s.Root, "outside-"+tag)
		if err := os.Mkdir(out, 0o700); err != nil {
			return fmt.Errorf("plant containment canaries: %w", err)
		}
		if err := os.WriteFile(filepath.Join(out, CanaryFile), []byte(s.CanaryNonce+"\n"), 0o600); err != nil {
			return fmt.Errorf("plant containment canaries: %w", err)
		}
		link := filepath.Join(r, "mcpspec-link-"+tag)
		if err := os.Symlink(out, link); err == nil {
			c.Link = link
			s.planted = append(s.planted, link)
		}
		s.Roots = append(s.Roots, c)
	}
	return nil
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
	// The working directory is a root of every server that serves files relative to it.
	if err := s.Contain(s.Dir); err != nil {
		_ = s.Close()
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

// Close removes the canaries planted beside and inside the roots, then the sandbox.
func (s *Sandbox) Close() error {
	var errs []error
	for _, p := range s.planted {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	s.planted = nil
	if err := os.RemoveAll(s.Root); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
