package tokens

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding names a BPE encoding.
type Encoding string

// The encodings a [Counter] supports.
const (
	// O200kBase is the encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series (the default).
	O200kBase Encoding = "o200k_base"
	// Cl100kBase is the encoding of GPT-4 and GPT-3.5 Turbo.
	Cl100kBase Encoding = "cl100k_base"
)

// DefaultEncoding is the encoding used when none is given.
const DefaultEncoding = O200kBase

// Encodings lists the supported encodings, the default first.
func Encodings() []Encoding { return []Encoding{O200kBase, Cl100kBase} }

// Counter counts tokens with one encoding. Special tokens such as <|endoftext|> in the text
// are counted as ordinary text (tiktoken's encode_ordinary). A Counter is not safe for
// concurrent use.
//
// Text is counted in chunks of at most [MaxChunk] bytes, cut where the encoding's
// pre-tokenizer always starts a new piece (after a newline before a non-blank, before a
// blank that precedes a letter), so the sum is the count of the whole text. Where a chunk has
// no such place (a long run of one letter, of blanks and newlines — what only a hostile text
// has), it is cut at [MaxChunk] bytes and the count may differ from tiktoken's by a token or
// two per cut: [Counter.ForcedCuts] says how many. Whole, such texts take time quadratic in
// their length in both the reference tokenizer and this one; cut, a megabyte takes a second.
type Counter struct {
	enc   Encoding
	codec tokenizer.Codec
	// forced counts the cuts made where the pre-tokenizer would not cut.
	forced int
}

// MaxChunk is the largest piece of text a [Counter] hands the tokenizer at once.
const MaxChunk = 1024

// NewCounter returns a Counter for enc ("" = [DefaultEncoding]).
func NewCounter(enc Encoding) (*Counter, error) {
	if enc == "" {
		enc = DefaultEncoding
	}
	var name tokenizer.Encoding
	switch enc {
	case O200kBase:
		name = tokenizer.O200kBase
	case Cl100kBase:
		name = tokenizer.Cl100kBase
	default:
		return nil, fmt.Errorf("tokens: unknown encoding %q (use %s)", enc, joinEncodings())
	}
	c, err := tokenizer.Get(name)
	if err != nil {
		return nil, fmt.Errorf("tokens: load %s: %w", enc, err)
	}
	// Invalid UTF-8 counts as U+FFFD, as tiktoken decodes Python str from bytes.
	c.SetErrorMode(tokenizer.ErrorModeReplace)
	return &Counter{enc: enc, codec: c}, nil
}

func joinEncodings() string {
	var names []string
	for _, e := range Encodings() {
		names = append(names, string(e))
	}
	return strings.Join(names, " or ")
}

// Encoding returns the counter's encoding.
func (c *Counter) Encoding() Encoding { return c.enc }

// ForcedCuts returns how many times the counter had to cut text where the tokenizer would
// not have; zero means every count so far is exactly tiktoken's.
func (c *Counter) ForcedCuts() int { return c.forced }

// Count returns the number of tokens of s.
func (c *Counter) Count(s string) (int, error) {
	if strings.IndexByte(s, 0x7f) >= 0 {
		// tiktoken-go's pre-tokenizer drops DEL (U+007F), the one character it loses. STX
		// (U+0002) falls in the same classes of both encodings' patterns, and neither byte is
		// part of any longer token in either vocabulary, so the count is tiktoken's.
		s = strings.ReplaceAll(s, "\x7f", "\x02")
	}
	total := 0
	for s != "" {
		i, forced := cut(s, MaxChunk)
		if forced {
			c.forced++
		}
		n, err := c.codec.Count(s[:i])
		if err != nil {
			return 0, fmt.Errorf("tokens: count %d bytes with %s: %w", i, c.enc, err)
		}
		total += n
		s = s[i:]
	}
	return total, nil
}

// cut returns where to end the next chunk of s, at most limit bytes: all of s when it fits,
// else the last place before limit where both encodings' pre-tokenizers start a new piece —
// just after a newline that precedes a non-blank other than '/', at a space that precedes an
// ASCII letter (the start of a " word" piece), or between a letter or digit and ASCII
// punctuation. forced reports
// that there was no such place and s was cut at limit (backed up to a rune boundary).
func cut(s string, limit int) (end int, forced bool) {
	if len(s) <= limit {
		return len(s), false
	}
	for i := limit; i > 0; i-- {
		prev, next := s[i-1], s[i]
		// Not before '/': o200k_base's punctuation piece may end in newlines and slashes.
		if prev == '\n' && !isBlank(next) && next != '/' {
			return i, false
		}
		if next == ' ' && i+1 < len(s) && isASCIILetter(s[i+1]) {
			return i, false
		}
		// After a letter or digit, before ASCII punctuation other than an apostrophe: no
		// piece holds both (compact JSON has this at nearly every quote).
		if isASCIIPunct(next) && next != '\'' {
			if r, _ := utf8.DecodeLastRuneInString(s[:i]); unicode.IsLetter(r) || unicode.IsNumber(r) {
				return i, false
			}
		}
	}
	end = limit
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	if end == 0 {
		end = limit // not UTF-8 at all: any cut is as good
	}
	return end, true
}

func isBlank(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

func isASCIIPunct(b byte) bool {
	return b > ' ' && b < 0x7f && !isASCIILetter(b) && (b < '0' || b > '9')
}

func isASCIILetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
