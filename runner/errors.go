package runner

import (
	"encoding/json"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
)

// isStdio reports whether srv is started as a command and speaks over its stdio.
func isStdio(srv *collection.Server) bool {
	return srv.Transport == collection.TransportStdio || srv.Transport == collection.TransportTestServer
}

// maskError masks every string of e.
func maskError(e *result.Error, mask func(string) string) {
	if e == nil {
		return
	}
	e.Message = mask(e.Message)
	e.Hint = mask(e.Hint)
}

// maskFailures masks every string of fs.
func maskFailures(fs []result.Failure, mask func(string) string) {
	for i := range fs {
		f := &fs[i]
		f.Path, f.Expected, f.Actual, f.Message = mask(f.Path), mask(f.Expected), mask(f.Actual), mask(f.Message)
	}
}

// maskTest masks every string of a finished test.
func maskTest(t *result.Test, mask func(string) string) {
	t.Target = mask(t.Target)
	t.Request = mask(t.Request)
	t.Response = mask(t.Response)
	t.Stderr = mask(t.Stderr)
	t.SkipReason = mask(t.SkipReason)
	maskError(t.Error, mask)
	maskFailures(t.Failures, mask)
	for i := range t.Attempts {
		maskError(t.Attempts[i].Error, mask)
		maskFailures(t.Attempts[i].Failures, mask)
	}
	for k, v := range t.Extracted {
		t.Extracted[k] = mask(v)
	}
	maskFindings(t.Findings, mask)
}

// maskRaw masks a raw JSON document's strings. Masking the encoded text could break an escape
// sequence, so the document is decoded, masked value by value and encoded again; a document
// that does not decode is masked as text and kept only if still valid.
func maskRaw(raw json.RawMessage, mask func(string) string) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if m := mask(string(raw)); m == string(raw) {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	out, err := json.Marshal(maskValue(v, mask))
	if err != nil {
		return nil
	}
	return out
}

func maskValue(v any, mask func(string) string) any {
	switch t := v.(type) {
	case string:
		return mask(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[mask(k)] = maskValue(e, mask)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = maskValue(e, mask)
		}
		return out
	}
	return v
}
