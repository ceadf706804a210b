package collection

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"gopkg.in/yaml.v3"
)

// Bounds of a message size limit (`maxMessageSize:`, --max-message-size).
const (
	// MinMessageSize is the smallest limit accepted: below it no handshake fits.
	MinMessageSize = 1 << 10
	// MaxMessageSize is the largest limit accepted.
	MaxMessageSize = 1 << 30
)

// ParseMessageSize reads a message size limit: a number of bytes ("1048576") or a size with a
// unit, binary ("64MiB", "512KiB") or decimal ("20MB"), between [MinMessageSize] and
// [MaxMessageSize].
func ParseMessageSize(s string) (int, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(s))
	if err != nil || strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	if n < MinMessageSize || n > MaxMessageSize {
		return 0, fmt.Errorf("%s is outside %s … %s", s, humanize.IBytes(MinMessageSize), humanize.IBytes(MaxMessageSize))
	}
	return int(n), nil
}

// size reads a message size limit: an integer of bytes or a string with a unit.
func (d *decoder) size(n *yaml.Node, what string) (int, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		d.errf(n, `write bytes, or a size with a unit such as "64MiB"`, "%s must be a size, got %s", what, kindName(n))
		return 0, false
	}
	v := n.Value
	if n.Tag == "!!int" {
		i, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 0, 64)
		if err != nil || i < 0 {
			d.errf(n, "", "%s: %q is not a number of bytes", what, v)
			return 0, false
		}
		v = strconv.FormatInt(i, 10)
	}
	size, err := ParseMessageSize(v)
	if err != nil {
		d.errf(n, `write bytes, or a size with a unit such as "64MiB"`, "%s: %v", what, err)
		return 0, false
	}
	return size, true
}
