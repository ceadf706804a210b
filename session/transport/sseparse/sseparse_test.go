package sseparse

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// outcome is everything a stream yields, for comparisons.
type outcome struct {
	Events    []Event
	Truncated *Event
	TooLong   []int // sizes reported by TooLongError, in order
	LastID    string
	Retry     time.Duration
	HasRetry  bool
	Err       string
}

func parseAll(t testing.TB, r io.Reader, max int) outcome {
	t.Helper()
	p := NewReader(r, max)
	var o outcome
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("parser did not finish")
		}
		ev, err := p.Next()
		var tl *TooLongError
		switch {
		case err == nil:
			if len(ev.Data) > max && max > 0 {
				t.Fatalf("event of %d bytes over the %d limit", len(ev.Data), max)
			}
			o.Events = append(o.Events, ev)
			continue
		case errors.As(err, &tl):
			o.TooLong = append(o.TooLong, tl.Size)
			continue
		case errors.Is(err, ErrTruncated):
			o.Truncated = &ev
		case err == io.EOF:
		default:
			o.Err = err.Error()
		}
		break
	}
	o.LastID = p.LastEventID()
	o.Retry, o.HasRetry = p.Retry()
	return o
}

func TestReader(t *testing.T) {
	msg := func(data, id string) Event { return Event{Type: "message", Data: []byte(data), ID: id} }
	tests := []struct {
		name string
		in   string
		max  int
		want outcome
	}{
		{name: "empty", in: "", want: outcome{}},
		{name: "one event LF", in: "event: message\ndata: {\"a\":1}\n\n",
			want: outcome{Events: []Event{msg(`{"a":1}`, "")}}},
		{name: "no event name means message", in: "data: x\n\n",
			want: outcome{Events: []Event{msg("x", "")}}},
		{name: "named event", in: "event: endpoint\ndata: /messages?sessionId=abc\n\n",
			want: outcome{Events: []Event{{Type: "endpoint", Data: []byte("/messages?sessionId=abc")}}}},
		{name: "multi-line data joined", in: "data: {\"a\":\ndata: 1}\n\n",
			want: outcome{Events: []Event{msg("{\"a\":\n1}", "")}}},
		{name: "CRLF", in: "data: a\r\ndata: b\r\n\r\n",
			want: outcome{Events: []Event{msg("a\nb", "")}}},
		{name: "CR only", in: "data: a\rdata: b\r\rdata: c\r\r",
			want: outcome{Events: []Event{msg("a\nb", ""), msg("c", "")}}},
		{name: "mixed endings", in: "data: a\r\n\ndata: b\r\r\ndata: c\n\r",
			want: outcome{Events: []Event{msg("a", ""), msg("b", ""), msg("c", "")}}},
		{name: "BOM skipped once", in: "\xef\xbb\xbfdata: a\n\n",
			want: outcome{Events: []Event{msg("a", "")}}},
		{name: "second BOM is a field name", in: "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n",
			want: outcome{Events: []Event{msg("b", "")}}},
		{name: "comments ignored", in: ": keepalive\ndata: a\n: more\n\n:ping\n\n",
			want: outcome{Events: []Event{msg("a", "")}}},
		{name: "priming event skipped but id and retry kept", in: "id: 7\nretry: 1500\ndata:\n\n",
			want: outcome{LastID: "7", Retry: 1500 * time.Millisecond, HasRetry: true}},
		{name: "priming with no data field", in: "id: p1\n\ndata: x\n\n",
			want: outcome{Events: []Event{msg("x", "p1")}, LastID: "p1"}},
		{name: "id persists across events", in: "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			want: outcome{Events: []Event{msg("a", "1"), msg("b", "1"), msg("c", "")}}},
		{name: "id with NUL ignored", in: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
			want: outcome{Events: []Event{msg("a", "1"), msg("b", "1")}, LastID: "1"}},
		{name: "bad retry ignored", in: "retry: 12a\nretry: -5\nretry:\ndata: a\n\n",
			want: outcome{Events: []Event{msg("a", "")}}},
		{name: "no space after colon", in: "data:a\ndata:  b\n\n",
			want: outcome{Events: []Event{msg("a\n b", "")}}},
		{name: "field without colon", in: "data\ndata\n\n",
			want: outcome{Events: []Event{msg("\n", "")}}},
		{name: "unknown field ignored", in: "foo: bar\ndata: a\n\n",
			want: outcome{Events: []Event{msg("a", "")}}},
		{name: "event name reset after dispatch", in: "event: x\ndata: a\n\ndata: b\n\n",
			want: outcome{Events: []Event{{Type: "x", Data: []byte("a")}, msg("b", "")}}},
		{name: "truncated event", in: "data: a\n\ndata: {\"partial",
			want: outcome{Events: []Event{msg("a", "")}, Truncated: &Event{Type: "message", Data: []byte(`{"partial`)}}},
		{name: "event without final blank line", in: "data: a\n",
			want: outcome{Truncated: &Event{Type: "message", Data: []byte("a")}}},
		{name: "too long event skipped, next one read", in: "data: 0123456789\ndata: x\n\ndata: ok\n\n", max: 8,
			want: outcome{Events: []Event{msg("ok", "")}, TooLong: []int{23}}},
		{name: "too long across lines", in: "data: 12345\ndata: 12345\n\ndata: ok\n\n", max: 8,
			want: outcome{Events: []Event{msg("ok", "")}, TooLong: []int{22}}},
		{name: "too long at EOF", in: "data: 0123456789", max: 8,
			want: outcome{TooLong: []int{16}}},
		{name: "exactly the limit", in: "data: 12345678\n\n", max: 8,
			want: outcome{Events: []Event{msg("12345678", "")}}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			t.Run(tt.name+"/onebyte="+strconv.FormatBool(oneByte), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				max := tt.max
				if max == 0 {
					max = DefaultMaxEventSize
				}
				got := parseAll(t, r, max)
				want := tt.want
				if want.LastID == "" && len(want.Events) > 0 {
					want.LastID = want.Events[len(want.Events)-1].ID
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("outcome (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestReaderSourceError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	p := NewReader(r, 0)
	ev, err := p.Next()
	if err != nil || string(ev.Data) != "a" {
		t.Fatalf("first: %q, %v", ev.Data, err)
	}
	if _, err := p.Next(); !errors.Is(err, boom) {
		t.Fatalf("second: err = %v, want boom", err)
	}
}

func TestReaderBoundedMemory(t *testing.T) {
	// A 16 MiB line must not be buffered whole: the reader skips it and goes on.
	const max = 1 << 20
	big := io.MultiReader(strings.NewReader("data: "), io.LimitReader(infinite('x'), 16<<20),
		strings.NewReader("\n\ndata: after\n\n"))
	got := parseAll(t, big, max)
	if len(got.TooLong) != 1 || len(got.Events) != 1 || string(got.Events[0].Data) != "after" {
		t.Fatalf("got %d too-long, events %v", len(got.TooLong), got.Events)
	}
}

type infinite byte

func (b infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// reference is a literal, unbounded transcription of the WHATWG algorithm, used as an oracle.
func reference(in string) outcome {
	in = strings.TrimPrefix(in, "\xef\xbb\xbf")
	var lines []string
	rest := ""
	for {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			rest = in
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var o outcome
	var data strings.Builder
	hasData, typ, idBuf, lastID := false, "", "", ""
	field := func(line string) {
		if strings.HasPrefix(line, ":") {
			return
		}
		name, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "event":
			typ = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf = value
			}
		case "retry":
			// Digits only; a value past 2^62 ns saturates there (computed with big.Int, not the
			// parser's strconv path, so an overflow bug in either shows up as a difference).
			if value != "" && strings.Trim(value, "0123456789") == "" {
				ms, _ := new(big.Int).SetString(value, 10)
				most := big.NewInt(int64(time.Duration(1<<62) / time.Millisecond))
				if ms.Cmp(most) > 0 {
					ms = most
				}
				o.Retry, o.HasRetry = time.Duration(ms.Int64())*time.Millisecond, true
			}
		}
	}
	event := func() Event {
		t := typ
		if t == "" {
			t = "message"
		}
		return Event{Type: t, Data: []byte(strings.TrimSuffix(data.String(), "\n")), ID: lastID}
	}
	for _, line := range lines {
		if line != "" {
			field(line)
			continue
		}
		lastID = idBuf
		if hasData && data.Len() > 1 {
			o.Events = append(o.Events, event())
		}
		data.Reset()
		hasData, typ = false, ""
	}
	if rest != "" {
		field(rest)
	}
	if hasData && data.Len() > 1 {
		ev := event()
		o.Truncated = &ev
	}
	o.LastID = lastID
	return o
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"", "data: a\n\n", "\xef\xbb\xbfdata: a\r\n\r\n", "id: 1\nretry: 10\ndata:\n\n",
		"event: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n", ": c\r\rdata: x\rdata: y\r\r",
		"data: a\n\ndata: part", "id: a\x00b\ndata\n\n", "\xef\xbb", "\r\n\r\n\n\r",
		"retry:2000000000000", "retry: 99999999999999999999999\ndata: x\n\n", // found by CI fuzzing: saturation
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		var r io.Reader = bytes.NewReader(in)
		switch mode % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		got := parseAll(t, r, DefaultMaxEventSize)
		want := reference(string(in))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("input %q (-reference +parser):\n%s", in, diff)
		}
		// Under a tiny limit nothing may panic and no event may exceed it.
		parseAll(t, bytes.NewReader(in), 4)
	})
}

// TestBufferGrowsOnDemand: a stream of small events keeps the first small buffer (a pending call
// over Streamable HTTP holds it while it waits); a large burst grows it up to readChunk.
func TestBufferGrowsOnDemand(t *testing.T) {
	small := NewReader(strings.NewReader("id: 1\ndata:\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 0)
	if _, err := small.Next(); err != nil {
		t.Fatal(err)
	}
	if got := cap(small.buf); got != firstChunk {
		t.Errorf("small stream: buffer of %d bytes, want %d", got, firstChunk)
	}
	big := strings.Repeat("data: "+strings.Repeat("x", 1000)+"\n\n", 200)
	r := NewReader(strings.NewReader(big), 0)
	n := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Data) != 1000 {
			t.Fatalf("event %d: %d bytes of data, want 1000", n, len(ev.Data))
		}
		n++
	}
	if n != 200 {
		t.Errorf("%d events, want 200", n)
	}
	if got := cap(r.buf); got != readChunk {
		t.Errorf("large stream: buffer of %d bytes, want it grown to %d", got, readChunk)
	}
}
