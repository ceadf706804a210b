package mutate

import (
	"encoding/json"
	"testing"
)

// BenchmarkGenerate measures case generation across every family, tools included, with
// frames bounded at 256 KiB (huge and deep frames are most of the bytes).
func BenchmarkGenerate(b *testing.B) {
	g := New(1, &Options{Tools: testTools(), MaxFrame: 256 << 10})
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		c := g.Next()
		for _, f := range c.Frames {
			n += int64(len(f))
		}
		n += int64(len(c.Args))
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/case")
}

// BenchmarkGenerateSmallFrames leaves out the families that build large frames.
func BenchmarkGenerateSmallFrames(b *testing.B) {
	g := New(1, &Options{Families: []Family{MalformedJSON, Truncated, InvalidUTF8, ControlChars, WrongJSONRPC, BadMethod, BadParams, BadID, NotificationID, Schema},
		Tools: testTools()})
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Next()
	}
}

// BenchmarkJudge measures the contract check of a typical request frame.
func BenchmarkJudge(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"_meta":{"progressToken":"t"},"name":"search","arguments":{"query":"mcp","limit":10,"tags":["a","b"]}}}`)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Judge(frame)
	}
}

// BenchmarkPlanTool measures deriving one tool's baseline and mutations from its schema.
func BenchmarkPlanTool(b *testing.B) {
	t := Tool{Name: "add", InputSchema: json.RawMessage(addSchema)}
	b.ReportAllocs()
	for b.Loop() {
		_ = planTool(t)
	}
}
