//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session"
)

// server-filesystem (stdio only) serves the directories named on its command line, or the roots
// the client offers when it declares the roots capability; a path outside them is refused with a
// tool error ("Access denied - path outside allowed directories"), read from dist/lib.js.

const filesystemPkg = "@modelcontextprotocol/server-filesystem"

// TestFilesystem writes and reads files through server-filesystem rooted at a temporary
// directory given on its command line, and checks that it refuses paths outside that root.
func TestFilesystem(t *testing.T) {
	p := requireNodePeer(t, filesystemPkg)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("do not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := stdioDialer(t, []string{p.node, p.entry, root}, peerEnvExtra, t.TempDir())
	log := newFrameLog()
	s := openStdioSession(t, ctx, d, &session.Options{ConnectTimeout: 20 * time.Second, RequestTimeout: 20 * time.Second, OnFrame: log.hook})
	defer checkFindings(t, s, log)

	if got := s.Era(); got != session.EraLegacy {
		t.Errorf("Era() = %q, want legacy", got)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, want := range []string{"read_text_file", "write_file", "list_directory", "list_allowed_directories"} {
		if !slices.Contains(toolNames(tools), want) {
			t.Errorf("tools/list lacks %q: %v", want, toolNames(tools))
		}
	}

	t.Run("write then read", func(t *testing.T) {
		path := filepath.Join(root, "sub", "hello.txt")
		if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		const body = "línea uno\nline two ✓\n"
		res, err := s.CallTool(ctx, "write_file", map[string]string{"path": path, "content": body}, nil)
		if err != nil || res.IsError {
			t.Fatalf("write_file: %v %s", err, res.Raw)
		}
		onDisk, err := os.ReadFile(path)
		if err != nil || string(onDisk) != body {
			t.Fatalf("after write_file the file holds %q (%v), want %q", onDisk, err, body)
		}
		res, err = s.CallTool(ctx, "read_text_file", map[string]string{"path": path}, nil)
		if err != nil || res.IsError {
			t.Fatalf("read_text_file: %v %s", err, res.Raw)
		}
		if got := textContent(t, res.Content); got != body {
			t.Errorf("read_text_file text = %q, want %q", got, body)
		}
		var structured struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(res.StructuredContent, &structured); err != nil || structured.Content != body {
			t.Errorf("read_text_file structuredContent = %s (%v), want content %q", res.StructuredContent, err, body)
		}
		res, err = s.CallTool(ctx, "list_directory", map[string]string{"path": filepath.Dir(path)}, nil)
		if err != nil || res.IsError {
			t.Fatalf("list_directory: %v %s", err, res.Raw)
		}
		if got := textContent(t, res.Content); !strings.Contains(got, "[FILE] hello.txt") {
			t.Errorf("list_directory = %q, want an entry [FILE] hello.txt", got)
		}
	})

	t.Run("outside the root", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]string
		}{
			{"read_text_file", map[string]string{"path": secret}},
			{"read_text_file", map[string]string{"path": filepath.Join(root, "..", filepath.Base(outside), "secret.txt")}},
			{"write_file", map[string]string{"path": filepath.Join(outside, "planted.txt"), "content": "x"}},
		} {
			res, err := s.CallTool(ctx, c.tool, c.args, nil)
			if err != nil {
				// A JSON-RPC error would also be a refusal, but this server uses tool errors.
				t.Errorf("%s %v: %v, want a tool error", c.tool, c.args, err)
				continue
			}
			if !res.IsError || !strings.Contains(textContent(t, res.Content), "Access denied") {
				t.Errorf("%s %v = %s, want isError with Access denied", c.tool, c.args, res.Raw)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "planted.txt")); !os.IsNotExist(err) {
			t.Errorf("write_file outside the root created a file (stat: %v)", err)
		}
	})
}

// TestFilesystemRoots starts server-filesystem with no directory: it asks the client for roots
// (roots/list) after initialization and serves those. The session answers from Options.Roots.
func TestFilesystemRoots(t *testing.T) {
	p := requireNodePeer(t, filesystemPkg)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "note.txt"), []byte("from roots"), 0o600); err != nil {
		t.Fatal(err)
	}
	rootURI := (&url.URL{Scheme: "file", Path: root}).String()
	d := stdioDialer(t, []string{p.node, p.entry}, peerEnvExtra, t.TempDir())
	s := openStdioSession(t, ctx, d, &session.Options{
		ConnectTimeout: 20 * time.Second,
		RequestTimeout: 20 * time.Second,
		Roots:          []session.Root{{URI: rootURI, Name: "interop"}},
	})

	// The server asks for roots on its own schedule after notifications/initialized and applies
	// them asynchronously; poll the tool that reports them, boundedly.
	var allowed string
	poll.Within(5*time.Second, func() bool {
		res, err := s.CallTool(ctx, "list_allowed_directories", map[string]any{}, nil)
		if err != nil {
			t.Fatalf("list_allowed_directories: %v", err)
		}
		allowed = textContent(t, res.Content)
		return strings.Contains(allowed, root)
	})
	if !strings.Contains(allowed, root) {
		t.Fatalf("list_allowed_directories = %q, want the root %s offered through roots/list", allowed, root)
	}
	res, err := s.CallTool(ctx, "read_text_file", map[string]string{"path": filepath.Join(root, "note.txt")}, nil)
	if err != nil || res.IsError || textContent(t, res.Content) != "from roots" {
		t.Errorf("read_text_file in the offered root: %v %s", err, res.Raw)
	}
}
