package linestream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/session/transport"
)

// got is a frame reduced to what the tests compare.
type got struct {
	Data   string
	Reason string
	Size   int
}

func collect(t testing.TB, r *Reader) ([]got, error) {
	t.Helper()
	var out []got
	for i := 0; i < 1<<20; i++ {
		f, err := r.ReadFrame()
		if err != nil {
			return out, err
		}
		g := got{Data: string(f.Data)}
		if f.Err != nil {
			var fe *transport.FrameError
			if !errors.As(f.Err, &fe) {
				t.Fatalf("frame error %T is not a *transport.FrameError", f.Err)
			}
			g.Reason, g.Size = fe.Reason, fe.Size
		}
		if f.At.IsZero() {
			t.Fatalf("frame %q has no arrival time", f.Data)
		}
		out = append(out, g)
	}
	t.Fatal("reader did not end")
	return nil, nil
}

// model frames in the simplest way, as the reference the Reader must agree with.
func model(in []byte, max int) []got {
	var out []got
	lines := bytes.Split(in, []byte("\n"))
	last := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		l = bytes.TrimSuffix(l, []byte("\r"))
		switch {
		case len(l) == 0:
		case len(l) > max:
			out = append(out, got{Data: string(l[:min(len(l), transport.ExcerptSize)]), Reason: "too-long", Size: len(l)})
		case !utf8.Valid(l):
			out = append(out, got{Data: string(l), Reason: "invalid-utf8", Size: len(l)})
		default:
			out = append(out, got{Data: string(l)})
		}
	}
	if len(last) > 0 {
		reason := "truncated"
		if len(last) > max+1 {
			reason = "too-long"
		}
		out = append(out, got{Data: string(last[:min(len(last), transport.ExcerptSize)]), Reason: reason, Size: len(last)})
	}
	return out
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 2000)
	tests := []struct {
		name string
		in   string
		max  int
		want []got
	}{
		{"two lines", "{\"a\":1}\n{\"b\":2}\n", 0, []got{{Data: `{"a":1}`}, {Data: `{"b":2}`}}},
		{"crlf", "a\r\nb\r\n", 0, []got{{Data: "a"}, {Data: "b"}}},
		{"only one cr stripped", "a\r\r\n", 0, []got{{Data: "a\r"}}},
		{"empty lines skipped", "\n\r\n\na\n\n", 0, []got{{Data: "a"}}},
		{"at the limit", "abcd\n", 4, []got{{Data: "abcd"}}},
		{"at the limit with cr", "abcd\r\n", 4, []got{{Data: "abcd"}}},
		{"one over", "abcde\nok\n", 4, []got{{Data: "abcde", Reason: "too-long", Size: 5}, {Data: "ok"}}},
		{"one over with cr", "abcde\r\nok\n", 4, []got{{Data: "abcde", Reason: "too-long", Size: 5}, {Data: "ok"}}},
		{"far over keeps an excerpt", long + "\nok\n", 100, []got{{Data: long[:transport.ExcerptSize], Reason: "too-long", Size: 2000}, {Data: "ok"}}},
		{"invalid utf8 kept whole", "{\"a\":\"\xff\xfe\"}\nok\n", 0, []got{{Data: "{\"a\":\"\xff\xfe\"}", Reason: "invalid-utf8", Size: 10}, {Data: "ok"}}},
		{"truncated last line", "a\n{\"id\":1", 0, []got{{Data: "a"}, {Data: `{"id":1`, Reason: "truncated", Size: 7}}},
		{"truncated over-long last line", "a\n" + long, 100, []got{{Data: "a"}, {Data: long[:transport.ExcerptSize], Reason: "too-long", Size: 2000}}},
		{"empty stream", "", 0, nil},
		{"multibyte utf8", "{\"s\":\"héllo — 世界\"}\n", 0, []got{{Data: "{\"s\":\"héllo — 世界\"}"}}},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			for _, bufSize := range []int{16, readBufferSize} {
				r := newReaderSize(wrap(strings.NewReader(tt.in)), tt.max, bufSize)
				out, err := collect(t, r)
				if err != io.EOF {
					t.Errorf("%s/%s/buf %d: err = %v, want io.EOF", tt.name, rname, bufSize, err)
				}
				if diff := cmp.Diff(tt.want, out); diff != "" {
					t.Errorf("%s/%s/buf %d: frames (-want +got):\n%s", tt.name, rname, bufSize, diff)
				}
				if _, err := r.ReadFrame(); err != io.EOF {
					t.Errorf("%s: error not sticky: %v", tt.name, err)
				}
			}
		}
	}
}

// TestReaderDoesNotBufferOverLongLines feeds a line far larger than the limit and checks the
// Reader's memory stays near the limit.
func TestReaderDoesNotBufferOverLongLines(t *testing.T) {
	const max = 1 << 10
	const total = 64 << 20
	src := io.MultiReader(io.LimitReader(repeatReader('a'), total), strings.NewReader("\n{}\n"))
	r := NewReader(src, max)
	f, err := r.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	var fe *transport.FrameError
	if !errors.As(f.Err, &fe) || fe.Reason != "too-long" || fe.Size != total {
		t.Fatalf("got %v, want too-long of %d bytes", f.Err, total)
	}
	if want := "transport: frame of 67108864 bytes exceeds the 1 KiB limit"; fe.Limit != max || fe.Error() != want {
		t.Errorf("limit %d, error %q; want %d, %q", fe.Limit, fe.Error(), max, want)
	}
	if len(f.Data) != transport.ExcerptSize {
		t.Errorf("excerpt is %d bytes, want %d", len(f.Data), transport.ExcerptSize)
	}
	if c := cap(r.line); c > readBufferSize+max {
		t.Errorf("reader kept a %d-byte buffer for a %d-byte limit", c, max)
	}
	if f, err := r.ReadFrame(); err != nil || string(f.Data) != "{}" {
		t.Fatalf("next frame = %q, %v; want {}", f.Data, err)
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\npart"), iotest.ErrReader(boom)), 0)
	out, err := collect(t, r)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	want := []got{{Data: "a"}, {Data: "part", Reason: "truncated", Size: 4}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

func TestReaderDataIsOwned(t *testing.T) {
	r := newReaderSize(strings.NewReader("aaaa\nbbbb\n"), 0, 16)
	f1, _ := r.ReadFrame()
	f2, _ := r.ReadFrame()
	if string(f1.Data) != "aaaa" || string(f2.Data) != "bbbb" {
		t.Fatalf("frames %q %q: first frame was overwritten", f1.Data, f2.Data)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\r\n{}\r\n"), uint16(8), uint8(0))
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz\r\nshort\n\xff\xfe\npartial"), uint16(10), uint8(1))
	f.Add([]byte("\r\r\n\r"), uint16(1), uint8(2))
	f.Add(bytes.Repeat([]byte("x"), 1000), uint16(600), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, max16 uint16, mode uint8) {
		max := int(max16%2048) + 1
		var src io.Reader = bytes.NewReader(in)
		switch mode % 3 {
		case 1:
			src = iotest.OneByteReader(src)
		case 2:
			src = iotest.HalfReader(src)
		}
		bufSize := 16
		if mode&4 != 0 {
			bufSize = readBufferSize
		}
		r := newReaderSize(src, max, bufSize)
		out, err := collect(t, r)
		if err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
		for _, g := range out {
			switch g.Reason {
			case "":
				if len(g.Data) > max || strings.Contains(g.Data, "\n") || !utf8.ValidString(g.Data) {
					t.Fatalf("bad frame %q (limit %d)", g.Data, max)
				}
			case "invalid-utf8":
				if len(g.Data) > max {
					t.Fatalf("invalid-utf8 frame of %d bytes over the %d limit", len(g.Data), max)
				}
			default:
				if len(g.Data) > transport.ExcerptSize {
					t.Fatalf("%s excerpt of %d bytes", g.Reason, len(g.Data))
				}
			}
		}
		if diff := cmp.Diff(model(in, max), out); diff != "" {
			t.Fatalf("reader disagrees with the model (limit %d, buf %d) (-want +got):\n%s", max, bufSize, diff)
		}
	})
}
