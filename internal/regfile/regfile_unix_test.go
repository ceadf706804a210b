//go:build unix

package regfile

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// within fails the test when fn does not return within 10s: a blocked open or read hangs.
func within[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still blocked after 10s", what)
		panic("unreachable")
	}
}

// openBlocked reports whether a goroutine is in the open system call of os.OpenFile (a FIFO's
// open blocks there until the other end opens).
func openBlocked() bool {
	buf := make([]byte, 1<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, " [syscall") && strings.Contains(g, "os.OpenFile(") {
			return true
		}
	}
	return false
}

func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(regular, []byte("name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.yaml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for path, want := range map[string]string{
		fifo(t): "is a named pipe, not a regular file",
		dir:     "is a directory, not a regular file",
		sock:    "is a socket, not a regular file",
		regular: "",
		link:    "",
	} {
		err := within(t, "Open "+path, func() error {
			f, err := Open(path)
			if err == nil {
				f.Close()
			}
			return err
		})
		var nr *NotRegularError
		switch {
		case want == "" && err != nil:
			t.Errorf("Open(%s) = %v, want success", path, err)
		case want != "" && (!errors.As(err, &nr) || !strings.HasSuffix(err.Error(), want) || !strings.HasPrefix(err.Error(), path)):
			t.Errorf("Open(%s) = %v, want a NotRegularError naming it and ending %q", path, err, want)
		}
	}
	if b, err := ReadFile(link, 100); err != nil || string(b) != "name: x\n" {
		t.Errorf("ReadFile through a link = %q, %v", b, err)
	}
}

func TestReadInputFromPipes(t *testing.T) {
	t.Run("no writer reads as empty", func(t *testing.T) {
		p := fifo(t)
		got := within(t, "ReadInput", func() string {
			b, err := ReadInput(context.Background(), p, 100)
			return fmt.Sprintf("%q %v", b, err)
		})
		if got != `"" <nil>` {
			t.Errorf("got %s, want empty", got)
		}
	})
	t.Run("a writer that closes", func(t *testing.T) {
		p := fifo(t)
		errc := make(chan error, 1)
		go func() {
			w, err := os.OpenFile(p, os.O_WRONLY, 0) // blocks until the reader opens
			if err == nil {
				_, err = w.WriteString("A=1\n")
				w.Close()
			}
			errc <- err
		}()
		// Wait for the writer to be blocked in its open, as a shell's <(…) writer would be.
		poll.Until(t, 10*time.Second, "the writer to block in its open", openBlocked)
		got := within(t, "ReadInput", func() string {
			b, err := ReadInput(context.Background(), p, 100)
			if err != nil {
				return "error: " + err.Error()
			}
			return string(b)
		})
		if got != "A=1\n" && got != "" { // "" when the writer had not opened yet: never a hang
			t.Errorf("got %q, want A=1", got)
		}
		if got == "" {
			// Unblock the writer's open.
			r, _ := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			defer r.Close()
		}
		if err := <-errc; err != nil {
			t.Errorf("writer: %v", err)
		}
	})
	t.Run("a silent writer is interrupted", func(t *testing.T) {
		p := fifo(t)
		r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0) // so the writer's open succeeds
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		err = within(t, "ReadInput", func() error {
			_, err := ReadInput(ctx, p, 100)
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("a directory is refused", func(t *testing.T) {
		var nr *NotRegularError
		if _, err := ReadInput(context.Background(), t.TempDir(), 100); !errors.As(err, &nr) {
			t.Errorf("err = %v, want NotRegularError", err)
		}
	})
	t.Run("limit", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "big")
		if err := os.WriteFile(p, make([]byte, 1000), 0o600); err != nil {
			t.Fatal(err)
		}
		var tl *TooLargeError
		if b, err := ReadInput(context.Background(), p, 100); !errors.As(err, &tl) || tl.Size != 1000 {
			t.Errorf("got %d bytes, %v; want a TooLargeError of 1000 bytes", len(b), err)
		}
	})
}

// TestReadFileRefusesFileBombs: a symbolic link to /dev/zero, a named pipe and a sparse file
// of gigabytes are refused at once, without reading them; a file within the cap is read.
func TestReadFileRefusesFileBombs(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.json")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	const limit = 1 << 20
	for _, tt := range []struct {
		path, want string
	}{
		{zero, "is a character device, not a regular file"},
		{fifo(t), "is a named pipe, not a regular file"},
		{sparse, "is 3.0 GB, more than the 1.0 MB mcpspec reads from such a file"},
	} {
		err := within(t, "ReadFile "+tt.path, func() error {
			_, err := ReadFile(tt.path, limit)
			return err
		})
		if err == nil || !strings.HasPrefix(err.Error(), tt.path) || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("ReadFile(%s) = %v, want an error ending %q", tt.path, err, tt.want)
		}
	}
	if b, err := ReadFile(small, 2); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile(small, 2) = %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(small, 1); !errors.As(err, &tl) || tl.Size != 2 || tl.Limit != 1 {
		t.Errorf("ReadFile(small, 1) = %v, want a TooLargeError of 2 bytes over 1", err)
	}
}

// TestWriteFileRefusesLinks: a symbolic link at the target, dangling or not, is refused and
// nothing is created outside the directory; a regular file is replaced whole.
func TestWriteFileRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(outside, "planted"), dangling); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(outside, "victim")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.json")
	if err := os.Symlink(existing, live); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dangling, live, fifo} {
		var nr *NotRegularError
		if err := WriteFile(p, []byte("new"), 0o644); !errors.As(err, &nr) {
			t.Errorf("WriteFile(%s) = %v, want a *NotRegularError", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created through the dangling link (stat: %v)", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
	plain := filepath.Join(dir, "plain.json")
	for _, want := range []string{"one", "two"} {
		if err := WriteFile(plain, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(plain); string(b) != want {
			t.Errorf("plain.json = %q, want %q", b, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d entries in the directory, want 4 (no temporary file left)", len(ents))
	}
}
