package cli

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestWriteJSONOutcome checks the --json envelope: the exit code follows the error and the
// context (an interrupted run is 130, as the process exits), the failure's fields come after
// exitCode unless the document explains the failure itself, and the error is returned.
func TestWriteJSONOutcome(t *testing.T) {
	type doc struct {
		Tool string `json:"tool"`
		jsonOutcome
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	failed := &Error{Code: ExitFailure, Msg: "2 rows failed", Hint: "see the rows"}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		explained bool
		want      string
	}{
		{"ok", context.Background(), nil, false, "{\n  \"tool\": \"x\",\n  \"exitCode\": 0\n}\n"},
		{"failed", context.Background(), failed, false,
			"{\n  \"tool\": \"x\",\n  \"exitCode\": 1,\n  \"message\": \"2 rows failed\",\n  \"hint\": \"see the rows\"\n}\n"},
		{"explained", context.Background(), failed, true, "{\n  \"tool\": \"x\",\n  \"exitCode\": 1\n}\n"},
		{"interrupted", cancelled, failed, true, "{\n  \"tool\": \"x\",\n  \"exitCode\": 130\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := writeJSONOutcome(tc.ctx, &b, &doc{Tool: "x"}, tc.err, tc.explained)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("returned %v, want %v", err, tc.err)
			}
			if b.String() != tc.want {
				t.Errorf("wrote\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
