package audit

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session"
)

// fsServer is a small filesystem server with one tool, read_file, confined to its roots, the
// way the published filesystem servers confine theirs — with one containment bug of the 2025
// advisories, or none (the fixed twin):
//
//	prefix     the root check is a string prefix match: <root>_x/… passes as inside
//	symlink    the check runs on the path as written: a symlink inside a root leads out
//	encoded    the check runs before percent-decoding: ..%2f escapes
//	backslash  the check runs before backslashes become separators: ..\ escapes
type fsServer struct {
	cwd   string
	roots []string
	bug   string
}

func (f *fsServer) ProtocolVersion() string { return session.Version20251125 }

func (f *fsServer) CallTool(_ context.Context, name string, args any, _ *session.CallOptions) (*session.ToolResult, error) {
	var a struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal(args.(json.RawMessage), &a); err != nil || a.Path == nil {
		return &session.ToolResult{IsError: true, Content: textResult("path: a string is required").Content}, nil
	}
	p := *a.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.cwd, p)
	}
	if err := f.allowed(p); err != nil {
		return &session.ToolResult{IsError: true, Content: textResult("access denied: " + err.Error()).Content}, nil
	}
	switch f.bug {
	case "encoded":
		if d, err := url.PathUnescape(p); err == nil {
			p = d
		}
	case "backslash":
		p = strings.ReplaceAll(p, `\`, "/")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return &session.ToolResult{IsError: true, Content: textResult("cannot read the file").Content}, nil
	}
	return textResult(string(b)), nil
}

// allowed is the root check, right or with the server's bug.
func (f *fsServer) allowed(p string) error {
	p = filepath.Clean(p)
	if f.bug == "prefix" {
		for _, r := range f.roots {
			if strings.HasPrefix(p, r) {
				return nil
			}
		}
		return errors.New("outside the allowed directories")
	}
	if f.bug != "symlink" && f.bug != "encoded" && f.bug != "backslash" {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return errors.New("no such file")
		}
		p = real
	}
	for _, r := range f.roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if f.bug == "symlink" || f.bug == "encoded" || f.bug == "backslash" {
			rr = r
		}
		if rel, err := filepath.Rel(rr, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	return errors.New("outside the allowed directories")
}

// TestActiveContainment: each containment bug is proved with a canary's nonce; the fixed
// twin raises nothing. The roots are the sandbox's working directory and a directory the
// server was given (as a filesystem server is, on its command line).
func TestActiveContainment(t *testing.T) {
	meta := &Metadata{Name: "fs", Tools: []json.RawMessage{json.RawMessage(`{"name":"read_file","description":"Reads a file inside the allowed directories.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true}}`)}}
	for _, bug := range []string{"", "prefix", "symlink", "encoded", "backslash"} {
		t.Run("bug="+bug, func(t *testing.T) {
			sb, err := NewSandbox(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := sb.Contain(data); err != nil {
				t.Fatal(err)
			}
			planted := slices.Clone(sb.planted)
			srv := &fsServer{cwd: sb.Dir, roots: []string{sb.Dir, data}, bug: bug}
			got, plan, err := Active(context.Background(), srv, meta, &ActiveOptions{Allow: []string{"*"}, Sandbox: sb})
			if err != nil {
				t.Fatal(err)
			}
			var proofs []string
			for _, f := range got {
				if f.RuleID != RulePathTraversal {
					t.Errorf("unexpected %s: %s", f.RuleID, f.Message)
					continue
				}
				proofs = append(proofs, f.Message)
			}
			if bug == "" && len(proofs) > 0 {
				t.Errorf("false alarm on the fixed server: %v", proofs)
			}
			if bug != "" && len(proofs) != 1 {
				t.Errorf("containment bug %q: %d findings %v (plan: %d probes)", bug, len(proofs), proofs, len(plan.Probes))
			}
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range planted {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s left behind", p)
				}
			}
		})
	}
}
