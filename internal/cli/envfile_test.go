package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadEnvFile checks --env-file end to end through regfile: dotenv conventions, a line of
// 64 KiB, the size limit, and syntax errors named as file:line with a hint.
func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("v", 64<<10)
	p := write("ok.env", "# dev\nexport who=dave # the user\ngreeting='hi there'\nkey=\"a\\nb\"\nbig="+long+"\nempty=\n")
	got, err := readEnvFile(context.Background(), p)
	if err != nil {
		t.Fatalf("readEnvFile: %v", err)
	}
	want := map[string]string{"who": "dave", "greeting": "hi there", "key": "a\nb", "big": long, "empty": ""}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("readEnvFile (-want +got):\n%s", d)
	}

	bad := write("bad.env", "a=1\n\nb=\"never closed\n")
	_, err = readEnvFile(context.Background(), bad)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != ExitConfig {
		t.Fatalf("readEnvFile(bad): %v, want a config error", err)
	}
	if want := "--env-file " + bad + `:3: the " opened here is never closed`; ce.Msg != want {
		t.Errorf("message %q, want %q", ce.Msg, want)
	}
	if ce.Hint == "" {
		t.Error("no hint")
	}

	huge := write("huge.env", "a="+strings.Repeat("x", maxEnvFileSize)+"\n")
	if _, err := readEnvFile(context.Background(), huge); !errors.As(err, &ce) || !strings.Contains(ce.Msg, "larger than 1 MiB") {
		t.Errorf("readEnvFile(huge): %v, want the size limit named", err)
	}
}
