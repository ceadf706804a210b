package stdio

import (
	"context"
	"strings"
	"testing"
)

func TestStartFailureNamesCommand(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want []string
	}{
		{"not on PATH", Command{Path: "mcpspec-no-such-server"}, []string{`"mcpspec-no-such-server"`, "PATH"}},
		{"no such file", Command{Path: "./no/such/server"}, []string{`"./no/such/server"`, "check"}},
		{"no command", Command{}, []string{"no command"}},
		{"bad dir", Command{Path: "true", Dir: "/no/such/dir"}, []string{"working directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.cmd.Dial(context.Background())
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte("first\n"))
	if got := tb.String(); got != "first\n" {
		t.Fatalf("short tail = %q", got)
	}
	for i := range 1000 {
		tb.Write([]byte(strings.Repeat("y", i%50) + "\n"))
	}
	tb.Write([]byte("last line\n"))
	got := tb.String()
	if len(got) > tailSize || !strings.HasSuffix(got, "last line\n") || strings.HasPrefix(got, "first") {
		t.Fatalf("tail of %d bytes ends %q", len(got), got[max(0, len(got)-20):])
	}
	tb.Write([]byte(strings.Repeat("z", 3*tailSize) + "\xff"))
	if got := tb.String(); len(got) > tailSize+2 || !strings.HasSuffix(got, "z\uFFFD") {
		t.Fatalf("huge write: tail of %d bytes ends %q", len(got), got[max(0, len(got)-8):])
	}
}
