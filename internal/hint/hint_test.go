package hint

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	base := errors.New("connection refused")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"none", base, ""},
		{"one", With(base, "start the server"), "start the server"},
		{"wrapped", fmt.Errorf("dial: %w", With(base, "start the server")), "start the server"},
		{"outermost first", With(fmt.Errorf("open: %w", With(base, "inner")), "outer"), "outer; inner"},
		{"each once", With(With(base, "same"), "same"), "same"},
		{"joined", errors.Join(With(base, "a"), With(errors.New("x"), "b")), "a; b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.err); got != tc.want {
				t.Errorf("Of = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWith(t *testing.T) {
	base := errors.New("boom")
	if With(nil, "x") != nil {
		t.Error("With(nil) is not nil")
	}
	if With(base, "") != base {
		t.Error("With(err, \"\") is not err")
	}
	e := With(base, "h")
	if e.Error() != "boom" || !errors.Is(e, base) {
		t.Errorf("With changed the message or lost the cause: %v", e)
	}
}

func TestJoin(t *testing.T) {
	if got := Join("", "a", "", "b", "a"); got != "a; b" {
		t.Errorf("Join = %q", got)
	}
}
