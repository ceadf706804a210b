package mcpserve

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestDrainHoldsEndOfInputForAnswers: a client sends two requests and a notification and
// closes its input; end of input reaches the server only after both requests are answered.
func TestDrainHoldsEndOfInputForAnswers(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"tools/list\"}\n"
	d := NewDrain(strings.NewReader(in), io.Discard, time.Minute)
	eof := make(chan struct{})
	go func() {
		_, _ = io.ReadAll(d.Reader())
		close(eof)
	}()
	w := d.Writer()
	for _, answer := range []string{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", `{"jsonrpc":"2.0","id":"two",`} {
		if _, err := io.WriteString(w, answer); err != nil {
			t.Fatal(err)
		}
		select {
		case <-eof:
			t.Fatalf("end of input passed on with a request unanswered (after %s)", answer)
		default:
		}
	}
	// The second answer arrives in two writes; its line ends with the second.
	if _, err := io.WriteString(w, "\"result\":{}}\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-eof:
	case <-time.After(10 * time.Second):
		t.Fatal("end of input held back after every request was answered")
	}
}

// TestDrainGivesUpAfterWait: a request the server never answers holds end of input for wait
// only.
func TestDrainGivesUpAfterWait(t *testing.T) {
	d := NewDrain(strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}\n"), io.Discard, 50*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(d.Reader())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("end of input held past its wait")
	}
}
