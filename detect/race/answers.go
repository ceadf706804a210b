package race

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/detect"
)

// Bounds on what a check keeps of its answers: a tool may answer megabytes per call, and a
// check makes a hundred calls, so answers are reduced to a digest as they arrive and only one
// exemplar is kept per distinct answer.
const (
	// maxExemplar bounds the canonical JSON kept (and reported) of one distinct answer.
	maxExemplar = 64 << 10
	// maxLeaf bounds a leaf's canonical value kept as is: a longer one is kept as digests
	// (of the value, and of it with its volatile tokens masked) and an excerpt.
	maxLeaf = 1 << 10
)

// digestMark starts a leaf kept as digests: mark, the value's digest, NUL, its masked digest,
// NUL, an excerpt.
const digestMark = "\x00sha256:"

// answers keeps the distinct answers of a check: one comparable answer (leaves and a bounded
// exemplar) per digest of the canonical JSON. Calls made concurrently record theirs at once,
// so no call's raw result outlives its call.
type answers struct {
	ig *Ignore

	mu      sync.Mutex // guards the fields below
	byKey   map[string]*answer
	parents map[string]string
}

func newAnswers(ig *Ignore) *answers {
	return &answers{ig: ig, byKey: map[string]*answer{}, parents: map[string]string{}}
}

// record makes o comparable, keeps its answer if it is a new one, and drops o's raw result:
// o.Result is replaced by nil and the answer's key is returned.
func (s *answers) record(ctx context.Context, o *detect.Outcome) string {
	var doc any
	if len(o.Result) > 0 {
		if d, err := assert.DecodeJSON(o.Result); err == nil {
			doc = d
		}
	}
	o.Result = nil
	if doc != nil {
		doc = expandJSONText(doc, 0)
	}
	if doc == nil {
		cat := string(o.Category)
		if cat == "" {
			cat = string(o.Class)
		}
		doc = map[string]any{"noAnswer": cat}
	}
	s.ig.Apply(ctx, doc)
	canonical := assert.CanonicalJSON(doc)
	sum := sha256.Sum256([]byte(canonical))
	key := hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byKey[key]; ok {
		return key
	}
	a := &answer{canonical: cut(canonical, maxExemplar), digest: key, leaves: leaves{}}
	flatten(doc, "$", a.leaves, s.parents)
	s.byKey[key] = a
	return key
}

// get returns the answer recorded under key.
func (s *answers) get(key string) *answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byKey[key]
}

// digestLeaf returns a long canonical leaf as its digests and an excerpt.
func digestLeaf(v string) string {
	full := sha256.Sum256([]byte(v))
	masked := sha256.Sum256([]byte(volatileToken.ReplaceAllString(v, "<volatile>")))
	return digestMark + hex.EncodeToString(full[:]) + "\x00" + hex.EncodeToString(masked[:]) + "\x00" + cut(v, 120)
}

// digestParts splits a leaf kept as digests; ok is false for any other leaf.
func digestParts(leaf string) (full, masked, excerpt string, ok bool) {
	rest, ok := strings.CutPrefix(leaf, digestMark)
	if !ok {
		return "", "", "", false
	}
	parts := strings.SplitN(rest, "\x00", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// displayLeaf renders a leaf for a report: a digested one as its excerpt and length note.
func displayLeaf(leaf string) string {
	if full, _, ex, ok := digestParts(leaf); ok {
		return ex + " (sha256 " + full[:12] + ")"
	}
	return leaf
}
