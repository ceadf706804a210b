package race

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session"
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

// TestJSONTextFieldsAreComparedOneByOne: an answer whose text block is serialized JSON with a
// timestamp varies one call at a time; a count in the same text that differs only under
// concurrency is still a race, at the path of the field inside the text.
func TestJSONTextFieldsAreComparedOneByOne(t *testing.T) {
	answer := func(items int, at string) detect.Outcome {
		text, _ := json.Marshal(fmt.Sprintf(`{"warehouse": "all", "items": %d, "generated_at": %q}`, items, at))
		return detect.Outcome{Method: "tools/call", Class: detect.OK, AnsweredAt: time.Now(),
			Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`)}
	}
	seq := []detect.Outcome{answer(5, "12:00:01"), answer(5, "12:00:02"), answer(5, "12:00:03")}
	cases := []struct {
		name      string
		con       []detect.Outcome
		verdict   Verdict
		divergent []string
	}{
		{"race", []detect.Outcome{answer(5, "12:00:04"), answer(9, "12:00:04"), answer(7, "12:00:05")}, VerdictRace, []string{"$.content[0].text.items"}},
		{"timestamp only", []detect.Outcome{answer(5, "12:00:04"), answer(5, "12:00:05")}, VerdictByDesign, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := judge(nil, seq, c.con)
			if r.Verdict != c.verdict || !slices.Equal(r.DivergentPaths, c.divergent) {
				t.Errorf("verdict %s, divergent %v; want %s, %v (%s)", r.Verdict, r.DivergentPaths, c.verdict, c.divergent, r.Diagnosis)
			}
			if !slices.Equal(r.VolatilePaths, []string{"$.content[0].text.generated_at"}) {
				t.Errorf("volatile %v, want the timestamp inside the text", r.VolatilePaths)
			}
		})
	}
	// --ignore reaches into the text, and text that is not a JSON object or array stays a string.
	ig, err := NewIgnore([]string{"$..generated_at"})
	if err != nil {
		t.Fatal(err)
	}
	store := newAnswers(ig)
	o := answer(5, "12:00:01")
	a := store.get(store.record(context.Background(), &o))
	if want := `{"content":[{"text":{"generated_at":"<ignored>","items":5,"warehouse":"all"},"type":"text"}]}`; a.canonical != want {
		t.Errorf("canonical %s, want %s", a.canonical, want)
	}
	for _, s := range []string{"3 items", "[not json", "{}x", "42"} {
		if got := expandJSONText(s, 0); got != s {
			t.Errorf("expandJSONText(%q) = %v", s, got)
		}
	}
}

// TestVolatileTokensInText: a text that varies one call at a time only in a timestamp, a uuid
// or an elapsed time is compared with those masked, so a race in the rest of it still shows;
// a text that varies otherwise (a counter) stays volatile as a whole.
func TestVolatileTokensInText(t *testing.T) {
	answer := func(text string) detect.Outcome {
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		return detect.Outcome{Class: detect.OK, Result: res, AnsweredAt: time.Now()}
	}
	seq := []detect.Outcome{
		answer("4 orders, as of 2026-11-26T09:34:00.261Z (took 3ms)"),
		answer("4 orders, as of 2026-11-26T09:34:00.298Z (took 12ms)"),
		answer("4 orders, as of 2026-11-26T09:34:01.004Z (took 2ms)"),
	}
	ids := []detect.Outcome{
		answer(`{"orderId":"0b6f1c2e-8d4a-4c1e-9a57-3f2d1e0c9b8a","reservedAt":"2026-11-26T09:34:00.261Z"}`),
		answer(`{"orderId":"7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f","reservedAt":"2026-11-26T09:34:00.270Z"}`),
	}
	counter := []detect.Outcome{answer("request 1"), answer("request 2"), answer("request 3")}
	cases := []struct {
		name     string
		seq, con []detect.Outcome
		want     Verdict
	}{
		{"race behind a timestamp", seq, []detect.Outcome{answer("4 orders, as of 2026-11-26T09:34:02.001Z (took 1ms)"), answer("9 orders, as of 2026-11-26T09:34:02.003Z (took 40ms)")}, VerdictRace},
		{"timestamps alone", seq, []detect.Outcome{answer("4 orders, as of 2026-11-26T09:34:02.001Z (took 1ms)"), answer("4 orders, as of 2026-11-26T09:34:02.009Z (took 7ms)")}, VerdictByDesign},
		{"uuid and time", ids, []detect.Outcome{answer(`{"orderId":"11111111-2222-4333-8444-555555555555","reservedAt":"2026-11-26T09:34:03.000Z"}`)}, VerdictByDesign},
		{"counter", counter, []detect.Outcome{answer("request 4"), answer("request 9")}, VerdictByDesign},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := judge(nil, c.seq, c.con)
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Diagnosis, c.want)
			}
			// The text, or its fields when it holds JSON (compared one by one), is volatile.
			if !slices.ContainsFunc(r.VolatilePaths, func(p string) bool { return p == "$.content[0].text" || strings.HasPrefix(p, "$.content[0].text.") }) {
				t.Errorf("volatile paths %v lack the text", r.VolatilePaths)
			}
			if c.want == VerdictRace && !slices.Equal(r.DivergentPaths, []string{"$.content[0].text"}) {
				t.Errorf("divergent paths %v", r.DivergentPaths)
			}
		})
	}
}

// judge compares and decides as a check does, on outcomes made up by a test.
func judge(ig *Ignore, seq, con []detect.Outcome) *Report {
	store := newAnswers(ig)
	calls := func(outs []detect.Outcome) []call {
		var out []call
		for _, o := range outs {
			c := call{o: o}
			c.key = store.record(context.Background(), &c.o)
			out = append(out, c)
		}
		return out
	}
	r := &Report{Tool: "t"}
	r.compare(store, calls(seq), calls(con))
	r.decide(context.Background())
	return r
}

// TestUnansweredIsNotARace: concurrent calls that got no answer (the server crashed, garbled
// the answer, or never answered) are that class, not a race, and the diagnosis points to the
// verb that looks into it; answers that do diverge are still a race.
func TestUnansweredIsNotARace(t *testing.T) {
	ok := detect.Outcome{Method: "tools/call", Class: detect.OK, AnsweredAt: time.Now(), Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}
	other := ok
	other.Result = json.RawMessage(`{"content":[{"type":"text","text":"ho"}]}`)
	lost := func(class detect.Class, cat session.Category) detect.Outcome {
		return detect.Outcome{Method: "tools/call", Class: class, Category: cat, Message: "gone"}
	}
	seq := []detect.Outcome{ok, ok, ok}
	cases := []struct {
		name    string
		seq     []detect.Outcome
		con     []detect.Outcome
		want    Verdict
		found   bool
		mention string
	}{
		{"crash", seq, []detect.Outcome{ok, lost(detect.Crash, session.Crash), ok, lost(detect.Crash, session.Disconnected)}, VerdictCrash, true, "mcpspec deadlock --tool t"},
		{"malformed", seq, []detect.Outcome{ok, lost(detect.Failed, session.Malformed)}, VerdictMalformed, true, "mcpspec call --tool t"},
		{"timeout", seq, []detect.Outcome{lost(detect.Failed, session.Timeout), ok}, VerdictNoAnswer, false, "tells a deadlock from a slow tool"},
		{"crash alone too", []detect.Outcome{ok, lost(detect.Crash, session.Crash)}, []detect.Outcome{lost(detect.Crash, session.Disconnected)}, VerdictCrash, true, "1 of 2 calls made one at a time"},
		{"race beside a crash", seq, []detect.Outcome{other, lost(detect.Crash, session.Crash)}, VerdictRace, true, "besides, the server went away"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := judge(nil, c.seq, c.con)
			if r.Verdict != c.want || r.Found() != c.found || !strings.Contains(r.Diagnosis, c.mention) {
				t.Errorf("verdict %s (found %v): %s; want %s (found %v) mentioning %q", r.Verdict, r.Found(), r.Diagnosis, c.want, c.found, c.mention)
			}
			for _, g := range r.Groups {
				if strings.Contains(g.Canonical, "noAnswer") {
					t.Errorf("a call without an answer is a group: %s", g.Canonical)
				}
			}
		})
	}
}

// TestLargeAnswersAreKeptAsDigests: a check keeps one bounded exemplar per distinct answer and
// long leaves as digests, and still tells a race inside a long text from a timestamp in it.
func TestLargeAnswersAreKeptAsDigests(t *testing.T) {
	// 240 KB: well over a leaf kept whole (maxLeaf) and an exemplar (maxExemplar), so that a
	// report keeping answers whole breaks the limit below; 2.4 MB took 10 times as long.
	big := strings.Repeat("lorem ipsum ", 20_000)
	answer := func(text string) detect.Outcome {
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		return detect.Outcome{Class: detect.OK, Result: res, AnsweredAt: time.Now()}
	}
	at := func(s, text string) detect.Outcome { return answer("as of 2026-11-26T09:34:0" + s + "Z " + text) }
	cases := []struct {
		name     string
		seq, con []detect.Outcome
		want     Verdict
	}{
		{"identical", []detect.Outcome{answer(big), answer(big)}, []detect.Outcome{answer(big), answer(big), answer(big)}, VerdictDeterministic},
		{"timestamp only", []detect.Outcome{at("1", big), at("2", big)}, []detect.Outcome{at("3", big), at("4", big)}, VerdictByDesign},
		{"race behind a timestamp", []detect.Outcome{at("1", big), at("2", big)}, []detect.Outcome{at("3", big), at("4", big+"x")}, VerdictRace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := judge(nil, c.seq, c.con)
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Diagnosis, c.want)
			}
			doc, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if limit := (len(r.Groups) + 1) * (maxExemplar + 4096); len(doc) > limit {
				t.Errorf("the report is %d bytes, over %d: answers are kept whole", len(doc), limit)
			}
			if len(r.Reference) > maxExemplar+len("…") || r.ReferenceDigest == "" {
				t.Errorf("reference of %d bytes, digest %q", len(r.Reference), r.ReferenceDigest)
			}
		})
	}
}
