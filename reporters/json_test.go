package reporters

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/result"
)

func TestJSONValidatesAgainstSchema(t *testing.T) {
	sch := schematest.Compile(t, "results.v1.json")
	for name, run := range map[string]*result.Run{"sample": sampleRun(), "interrupted": interruptedRun(), "empty": emptyRun(), "zero": {}, "findings": findingsRun(), "coverage": coverageRun(), "messages": messagesRun()} {
		t.Run(name, func(t *testing.T) {
			out := render(t, "json", nil, run, false)
			if err := schematest.Validate(t, sch, out); err != nil {
				t.Fatalf("json report does not follow results.v1.json: %v", err)
			}
		})
	}
	// Broken documents are rejected, so the schema is a real check.
	bad := map[string]func(m map[string]any){
		"unknown status":   func(m map[string]any) { test0(m)["status"] = "flaky" },
		"negative latency": func(m map[string]any) { test0(m)["latencyNs"] = -1 },
		"unknown field":    func(m map[string]any) { test0(m)["surprise"] = true },
		"bad time":         func(m map[string]any) { m["startedAt"] = "yesterday" },
		"missing id":       func(m map[string]any) { delete(m, "id") },
	}
	for name, mutate := range bad {
		t.Run("rejects "+name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(render(t, "json", nil, sampleRun(), false), &m); err != nil {
				t.Fatal(err)
			}
			mutate(m)
			b, _ := json.Marshal(m)
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err := sch.Validate(inst); err == nil {
				t.Fatal("schema accepted a broken document")
			}
		})
	}
}

// messagesRun has a test that kept the notifications and requests of its step.
func messagesRun() *result.Run {
	run := findingsRun()
	t := run.Collections[0].Tests[0]
	t.Messages = []result.Message{
		{Kind: "notification", Method: "notifications/progress", Params: `{"progress":1,"progressToken":1}`},
		{Kind: "request", Method: "sampling/createMessage", Params: `{"messages":[]}`, Reply: `{"role":"assistant"}`},
		{Kind: "request", Method: "elicitation/create", Error: "-1 declined"},
	}
	t.MessagesDropped = 2
	return run
}

func test0(m map[string]any) map[string]any {
	return m["collections"].([]any)[0].(map[string]any)["tests"].([]any)[0].(map[string]any)
}

// TestJSONRoundTrip checks the report decodes back into the same Run (the summary is extra).
func TestJSONRoundTrip(t *testing.T) {
	want := sampleRun()
	var got result.Run
	if err := json.Unmarshal(render(t, "json", nil, want, false), &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, &got, cmp.Comparer(sameJSON)); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

// TestSchemaCoversResultModel guards against drift: every JSON field of the result types is
// declared in the schema definition that describes it, and nothing else is.
func TestSchemaCoversResultModel(t *testing.T) {
	doc := schematest.Doc(t, "results.v1.json").(map[string]any)
	defs := doc["$defs"].(map[string]any)
	props := func(def map[string]any) []string {
		var ks []string
		for k := range def["properties"].(map[string]any) {
			ks = append(ks, k)
		}
		return sortStrings(ks)
	}
	cases := []struct {
		def  map[string]any
		typ  reflect.Type
		more []string
	}{
		{doc, reflect.TypeOf(result.Run{}), []string{"summary"}},
		{defs["git"].(map[string]any), reflect.TypeOf(result.Git{}), nil},
		{defs["collection"].(map[string]any), reflect.TypeOf(result.Collection{}), nil},
		{defs["server"].(map[string]any), reflect.TypeOf(result.Server{}), nil},
		{defs["tool"].(map[string]any), reflect.TypeOf(result.Tool{}), nil},
		{defs["test"].(map[string]any), reflect.TypeOf(result.Test{}), nil},
		{defs["attempt"].(map[string]any), reflect.TypeOf(result.Attempt{}), nil},
		{defs["failure"].(map[string]any), reflect.TypeOf(result.Failure{}), nil},
		{defs["error"].(map[string]any), reflect.TypeOf(result.Error{}), nil},
		{defs["message"].(map[string]any), reflect.TypeOf(result.Message{}), nil},
		{defs["summary"].(map[string]any), reflect.TypeOf(Summary{}), nil},
		{defs["coverage"].(map[string]any), reflect.TypeOf(result.Coverage{}), nil},
		{defs["coverage"].(map[string]any)["properties"].(map[string]any)["servers"].(map[string]any)["items"].(map[string]any), reflect.TypeOf(result.ServerCoverage{}), nil},
		{defs["coverageKind"].(map[string]any), reflect.TypeOf(result.KindCoverage{}), nil},
	}
	for _, tc := range cases {
		want := append(jsonFields(tc.typ), tc.more...)
		if d := cmp.Diff(sortStrings(want), props(tc.def)); d != "" {
			t.Errorf("%s: schema properties differ from Go fields (-go +schema):\n%s", tc.typ.Name(), d)
		}
	}
}

func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !t.Field(i).IsExported() {
			continue
		}
		if name == "" {
			name = t.Field(i).Name
		}
		out = append(out, name)
	}
	return out
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// sameJSON compares raw JSON ignoring insignificant whitespace.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
