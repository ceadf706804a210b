package probe

import (
	"math/rand/v2"
	"strings"
)

// forgeSessionID returns a session id the server never issued in the shape of the ids it
// does issue: the prefix a and b (two ids it issued) share is kept, and so are characters
// that are not letters or digits (separators); every other character is replaced by another
// of the same alphabet (lowercase hex, uppercase hex, or digit / lowercase / uppercase
// letter). A server that checks only the format of an id accepts it; one that looks the id
// up refuses it. r supplies the randomness.
func forgeSessionID(a, b string, r *rand.Rand) string {
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	lowerHex, upperHex := true, true
	for _, c := range []byte(a[prefix:]) {
		switch {
		case isDigit(c):
		case c >= 'a' && c <= 'f':
			upperHex = false
		case c >= 'A' && c <= 'F':
			lowerHex = false
		case isLetter(c):
			lowerHex, upperHex = false, false
		}
	}
	for range 8 {
		var s strings.Builder
		s.WriteString(a[:prefix])
		for _, c := range []byte(a[prefix:]) {
			s.WriteByte(forgeByte(c, lowerHex, upperHex, r))
		}
		if f := s.String(); f != a && f != b {
			return f
		}
	}
	return a[:prefix] + strings.Repeat("0", len(a)-prefix)
}

// forgeByte replaces c by a random byte of its alphabet; separators stay.
func forgeByte(c byte, lowerHex, upperHex bool, r *rand.Rand) byte {
	const (
		digits = "0123456789"
		lower  = "abcdefghijklmnopqrstuvwxyz"
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	)
	pick := func(set string) byte { return set[r.IntN(len(set))] }
	switch {
	case !isDigit(c) && !isLetter(c):
		return c
	case lowerHex:
		return pick(digits + "abcdef")
	case upperHex:
		return pick(digits + "ABCDEF")
	case isDigit(c):
		return pick(digits)
	case c >= 'a' && c <= 'z':
		return pick(lower)
	}
	return pick(upper)
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
