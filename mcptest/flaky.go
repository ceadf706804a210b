package mcptest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// FlakyRoll returns the flaky tool's roll in [0, 1) for (seed, callID). It is byte-stable
// across processes, operating systems and architectures:
//
//	h    := FNV-1a 64-bit hash of the seed string's bytes
//	rng  := math/rand/v2 PCG seeded with (h, h XOR uint64(callID))
//	roll := rng.Float64()   // the first draw
//
// The flaky tool fails when roll < fail_rate. The same function, seeded with [Options.Seed]
// and the 1-based tools/call index, decides [Options.CrashRate] crashes.
func FlakyRoll(seed string, callID int64) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^uint64(callID))).Float64()
}

// FlakyFailureMessage is the JSON-RPC error message of a failed flaky call, for example
// "flaky failure (roll=0.4231 < rate=0.5000)".
func FlakyFailureMessage(roll, rate float64) string {
	return fmt.Sprintf("flaky failure (roll=%.4f < rate=%.4f)", roll, rate)
}
