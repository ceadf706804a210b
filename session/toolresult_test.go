package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeToolResult checks decodeToolResult against encoding/json on every valid JSON
// input whose keys are spelled exactly (encoding/json also matches "Content" or "ISERROR";
// MCP's member names are case-sensitive, and so is the session).
func FuzzDecodeToolResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[],"isError":true}`,
		`{"content":[{"type":"text","text":"a"},{"type":"image","data":"","mimeType":"image/png"}],"structuredContent":{"x":1}}`,
		`{"content":null,"structuredContent":null,"isError":false}`,
		`{"content":[1,"two",null,[3]],"isError":true,"isError":false}`,
		`{}`, `[]`, `null`, ` null `, `{"content":{}}`, `{"content":"x"}`, `{"isError":"yes"}`, ` { "content" : [ 1 , 2 ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := decodeToolResult(raw)
		if !json.Valid(raw) {
			return
		}
		folded := false
		_ = eachMember(raw, func(k, _ []byte) {
			s, _ := unquote(k)
			for _, name := range []string{"content", "structuredContent", "isError"} {
				if s != name && strings.EqualFold(s, name) {
					folded = true
				}
			}
		})
		if folded {
			return
		}
		if string(bytes.TrimSpace(raw)) == "null" {
			// encoding/json leaves a struct untouched for null; a tools/call result must be an
			// object, so the session rejects it.
			if err == nil {
				t.Fatalf("decodeToolResult(%s) accepted a null result", raw)
			}
			return
		}
		var want ToolResult
		jerr := json.Unmarshal(raw, &want)
		if err != nil {
			if jerr == nil {
				t.Fatalf("decodeToolResult(%s): %v; encoding/json decodes it", raw, err)
			}
			return
		}
		if jerr != nil {
			return // a member of the wrong type (isError "yes"): the session reads it as false
		}
		if !bytes.Equal(got.Raw, raw) {
			t.Fatalf("Raw = %s, want the whole result", got.Raw)
		}
		if diff := cmp.Diff(want.Content, got.Content); diff != "" || (want.Content == nil) != (got.Content == nil) {
			t.Fatalf("decodeToolResult(%s).Content (-encoding/json +ours):\n%s", raw, diff)
		}
		if !bytes.Equal(want.StructuredContent, got.StructuredContent) || want.IsError != got.IsError {
			t.Fatalf("decodeToolResult(%s) = %s,%v; encoding/json %s,%v", raw, got.StructuredContent, got.IsError, want.StructuredContent, want.IsError)
		}
	})
}

func TestDecodeToolResultAllocations(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"hello"}]}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = decodeToolResult(raw) }); n != 1 {
		t.Errorf("decodeToolResult allocates %v times for one content element, want 1", n)
	}
	tr, err := decodeToolResult([]byte(`{"content":[1,2,3]}`))
	if err != nil || len(tr.Content) != 3 || string(tr.Content[2]) != "3" {
		t.Fatalf("three elements: %v %v", tr, err)
	}
	tr.Content = append(tr.Content, json.RawMessage("4")) // the caller owns the slice
}
