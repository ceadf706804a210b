package race

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIgnore(t *testing.T) {
	doc := func() any {
		var v any
		_ = json.Unmarshal([]byte(`{"content":[{"type":"text","text":"at 12:00"},{"type":"text","text":"id 7"}],
			"structuredContent":{"time":"12:00","meta":{"timestamp":1,"x-id":"a"},"items":[{"timestamp":2},{"id":3}]}}`), &v)
		return v
	}
	cases := []struct {
		paths []string
		want  string
	}{
		{[]string{"$.structuredContent.time"}, `{"content":[{"text":"at 12:00","type":"text"},{"text":"id 7","type":"text"}],"structuredContent":{"items":[{"timestamp":2},{"id":3}],"meta":{"timestamp":1,"x-id":"a"},"time":"<ignored>"}}`},
		{[]string{"$..timestamp"}, `{"content":[{"text":"at 12:00","type":"text"},{"text":"id 7","type":"text"}],"structuredContent":{"items":[{"timestamp":"<ignored>"},{"id":3}],"meta":{"timestamp":"<ignored>","x-id":"a"},"time":"12:00"}}`},
		{[]string{"$.content[*].text", "$.structuredContent.meta[\"x-id\"]"}, `{"content":[{"text":"<ignored>","type":"text"},{"text":"<ignored>","type":"text"}],"structuredContent":{"items":[{"timestamp":2},{"id":3}],"meta":{"timestamp":1,"x-id":"<ignored>"},"time":"12:00"}}`},
		{[]string{"$.content[1]", "$.missing.key"}, `{"content":[{"text":"at 12:00","type":"text"},"<ignored>"],"structuredContent":{"items":[{"timestamp":2},{"id":3}],"meta":{"timestamp":1,"x-id":"a"},"time":"12:00"}}`},
		{[]string{"$.structuredContent.meta.*"}, `{"content":[{"text":"at 12:00","type":"text"},{"text":"id 7","type":"text"}],"structuredContent":{"items":[{"timestamp":2},{"id":3}],"meta":{"timestamp":"<ignored>","x-id":"<ignored>"},"time":"12:00"}}`},
	}
	for _, c := range cases {
		ig, err := NewIgnore(c.paths)
		if err != nil {
			t.Fatalf("NewIgnore(%v): %v", c.paths, err)
		}
		d := doc()
		ig.Apply(context.Background(), d)
		b, _ := jsonMarshal(d)
		if diff := cmp.Diff(c.want, string(b)); diff != "" {
			t.Errorf("ignore %v (-want +got):\n%s", c.paths, diff)
		}
	}
	for _, bad := range []string{"time", "$", "$.a[?(@.x==1)]", "$.a..b"} {
		if _, err := NewIgnore([]string{bad}); err == nil {
			t.Errorf("NewIgnore(%q) accepted", bad)
		}
	}
}

func TestExcused(t *testing.T) {
	parents := map[string]string{}
	a, b := leaves{}, leaves{}
	var da, db any
	_ = json.Unmarshal([]byte(`{"items":[{"id":1}],"n":1,"s":"x"}`), &da)
	_ = json.Unmarshal([]byte(`{"items":[{"id":1},{"id":2}],"n":2,"s":"x"}`), &db)
	flatten(da, "$", a, parents)
	flatten(db, "$", b, parents)
	d := differences(a, b)
	if diff := cmp.Diff([]string{"$.items#len", "$.items[1].id", "$.n"}, d); diff != "" {
		t.Fatalf("differences (-want +got):\n%s", diff)
	}
	volatile := map[string]bool{"$.items#len": true}
	if !excused("$.items[1].id", volatile, parents) || excused("$.n", volatile, parents) {
		t.Errorf("an element under a volatile length is excused, $.n is not")
	}
}

func TestFreeStringsAreTagged(t *testing.T) {
	schema := schemaOf([]byte(`{"type":"object","properties":{
		"kind":{"type":"string","enum":["a","b"]},"when":{"type":"string","format":"date-time"},
		"entities":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"type":{"type":"string"}}}},
		"n":{"type":"integer"}}}`))
	args := map[string]any{"kind": "a", "when": "2024-01-02T03:04:05Z", "n": 1.0,
		"entities": []any{map[string]any{"name": "ada", "type": "person"}}}
	fields := freeStrings(args, schema)
	var paths []string
	for _, f := range fields {
		paths = append(paths, f.path)
	}
	if diff := cmp.Diff([]string{"$.entities[0].name", "$.entities[0].type"}, paths); diff != "" {
		t.Fatalf("free strings (-want +got):\n%s", diff)
	}
	tagged := deepCopy(args).(map[string]any)
	for _, f := range fields {
		f.set(tagged, "M")
	}
	e := tagged["entities"].([]any)[0].(map[string]any)
	if e["name"] != "ada-M" || e["type"] != "person-M" || tagged["kind"] != "a" {
		t.Errorf("tagged %v", tagged)
	}
	if args["entities"].([]any)[0].(map[string]any)["name"] != "ada" {
		t.Errorf("the original arguments changed: %v", args)
	}
}
