package assert

import (
	"context"
	"encoding/base64"
	"errors"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"testing"
	"time"
)

// budgetLimits are small limits, so that what an evaluation may allocate is small next to the
// inputs the tests hand it.
var budgetLimits = ExprLimits{
	MaxValueBytes: 16 << 10,
	MaxTotalBytes: 64 << 10,
	MemoryBudget:  5_000,
	MaxSteps:      5_000,
	Timeout:       10 * time.Second,
}

// allocBound is what one evaluation under l may allocate:
//   - 8 bytes for each byte of the values it computes (MaxTotalBytes): Go's growth of slices
//     and buffers, and what decoding or boxing adds to what measure counts;
//   - 32 times MaxValueBytes for the one call that is refused after it ran (toJSON escaping a
//     value to six times its size, fromJSON decoding a text to twenty);
//   - 16 bytes a unit of the VM's budget (ranges, list and map literals);
//   - 128 bytes a step (the VM's stack a map or filter grows, calls of the guard, boxed numbers);
//   - 256 KiB for the VM itself and the error message.
func allocBound(l ExprLimits) uint64 {
	l = l.withDefaults()
	return 8*uint64(l.MaxTotalBytes) + 32*uint64(l.MaxValueBytes) + 16*uint64(l.MemoryBudget) +
		128*uint64(l.MaxSteps) + 256<<10
}

// budgetEnv is an environment with large inputs: a 15 MB text (as in the report that found the
// bypass) and a response whose lists and maps are far larger than the budget.
func budgetEnv() ExprEnv {
	const n = 300_000
	items := make([]any, n)
	strs := make([]any, n)
	pairs := make([]any, n/4)
	obj := make(map[string]any, n/4)
	for i := range items {
		items[i] = float64(i)
		strs[i] = "s" + string(rune('a'+i%26))
	}
	for i := range pairs {
		k := base64.StdEncoding.EncodeToString([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
		pairs[i] = []any{k, float64(i)}
		obj[k] = float64(i)
	}
	nested := make([]any, 600)
	for i := range nested {
		nested[i] = items[:1000]
	}
	// deep nests 900 arrays: small as a value, but 1.6 MB once indented as JSON.
	var deep any = []any{}
	for range 900 {
		deep = []any{deep}
	}
	jsonText := "[" + strings.Repeat("0,", 2_000_000) + "0]"
	return ExprEnv{
		Text: strings.Repeat("ab,c\n", 3_000_000),
		Response: map[string]any{
			"items": items, "strs": strs, "pairs": pairs, "obj": obj, "nested": nested, "deep": deep,
			"json": jsonText,
			"b64":  base64.StdEncoding.EncodeToString([]byte(jsonText)),
			"num":  strings.Repeat("1", 4_000_000),
			"pat":  "(a|b)" + strings.Repeat("x?", 50_000),
		},
		Vars: map[string]any{},
	}
}

// TestExprBudgetBoundsAllocation: whatever the input, one evaluation allocates no more than its
// budget allows; each of these expressions used to allocate the size of its input or more before
// any limit was checked.
func TestExprBudgetBoundsAllocation(t *testing.T) {
	env := budgetEnv()
	tests := []struct{ src, msg string }{
		{`len(split(text, "")) < 0`, "split would build"},
		{`len(split(text, ",")) < 0`, "split would build"},
		{`len(split(text, "", -1)) < 0`, "split would build"},
		{`len(split(text, "\n", 1000000)) < 0`, "split would build"},
		{`len(splitAfter(text, "\n")) < 0`, "splitAfter would build"},
		{`len(splitAfter(text, "")) < 0`, "splitAfter would build"},
		{`repeat(text, 1000000) == ""`, "repeat would build"},
		{`repeat("ab", 100000) == ""`, "repeat would build"},
		{`len(1..1000000000) > 0`, "ranges (a..b), lists and maps"},
		{`len(1..100000) > 0`, "ranges (a..b), lists and maps"},
		{`upper(text) == ""`, "upper would build"},
		{`lower(text) == ""`, "lower would build"},
		{`text + text == ""`, "+ would build"},
		{`reduce(1..30, #acc + #acc, "ab") != ""`, "+ would build"},
		{`toJSON(response.items) == ""`, "toJSON would build"},
		{`toJSON(response.deep) == ""`, "toJSON would build"},
		{`toJSON(text) == ""`, "toJSON would build"},
		{`fromJSON(response.json) != nil`, "fromJSON would build"},
		{`toBase64(text) == ""`, "toBase64 would build"},
		{`fromBase64(response.b64) == ""`, "fromBase64 would build"},
		{`string(response) == ""`, "string would build"},
		{`string(text) == ""`, "string would build"},
		{`len(keys(response.obj)) < 0`, "keys would build"},
		{`len(values(response.obj)) < 0`, "values would build"},
		{`len(toPairs(response.obj)) < 0`, "toPairs would build"},
		{`len(fromPairs(response.pairs)) < 0`, "fromPairs would build"},
		{`len(sort(response.items)) < 0`, "sort would build"},
		{`len(reverse(response.items)) < 0`, "reverse would build"},
		{`len(uniq(response.items)) < 0`, "uniq would build"},
		{`len(concat(response.items, response.items)) < 0`, "concat would build"},
		{`len(flatten(response.nested)) < 0`, "flatten would build"},
		{`median(response.items) < 0`, "median would build"},
		{`join(response.strs, ",") == ""`, "join would build"},
		{`join([text, text]) == ""`, "a computed value exceeds 16384 bytes"},
		{`replace(text, "a", "bb") == ""`, "replace would build"},
		{`replace(text, "", "-") == ""`, "replace would build"},
		{`len(map(response.items, #)) < 0`, "map would build"},
		{`len(sortBy(response.items, -#)) < 0`, "sortBy would build"},
		{`len(groupBy(response.items, int(#) % 7)) < 0`, "groupBy would build"},
		{`len(filter(response.items, true)) < 0`, "more than 5000 steps"},
		{`int(response.num) > 0`, "int would build"},
		{`float(response.num) > 0`, "float would build"},
		{`duration(text) > duration("1s")`, "duration would build"},
		{`date(text) == now()`, "date would build"},
		{`timezone(text) != nil`, "timezone would build"},
		{`text matches response.pat`, "matches (compiling its pattern) would build"},
		{`text matches text`, "matches (compiling its pattern) would build"},
	}
	bound := allocBound(budgetLimits)
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			prog, err := CompileExpr(tc.src, budgetLimits)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			var err2 error
			alloc := allocated(func() {
				_, err2 = EvalExpr(context.Background(), prog, env, budgetLimits)
			})
			t.Logf("allocated %d bytes", alloc)
			if alloc > bound {
				t.Errorf("allocated %d bytes, over the bound of %d for these limits", alloc, bound)
			}
			if err2 == nil {
				t.Fatal("evaluation succeeded; want it stopped by the budget")
			}
			msg := truncate(err2.Error(), 300)
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("err = %s, want it to name %q", msg, tc.msg)
			}
			if !errors.Is(err2, ErrExprLimit) {
				t.Errorf("err = %s, want ErrExprLimit", msg)
			}
		})
	}
}

// allocated reports the bytes f allocated (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestPatternCostCoversCompile: what `matches` charges a pattern covers what compiling it and
// matching with it allocate, so that the budget bounds a pattern the response supplies.
func TestPatternCostCoversCompile(t *testing.T) {
	text := strings.Repeat("ab1 É", 200)
	for _, pat := range []string{
		`a`, `^fi`, `(a|b)+c`, `[a-z]+\d{3}$`, `\pL{1000}`, `(?:[\pL\pN]{100}){10}`, `(?i:\pL)+`,
		`[^\pL]{1000}`, strings.Repeat(`.{1000}`, 20), strings.Repeat(`\pL`, 200), strings.Repeat(`(a|b)`, 300),
		`^(?:\w+\s)*$`, `^\pL{1000}$`, `^(?:[\pL\pN]{100}){10}$`, `^[^a]{1000}b$`, `^(?i:[\pL\pS]{500})$`, `x{2,1000}`, `(?:(?:a{10}){10}){10}`, `(?:.{0,1000}){1}`, strings.Repeat(`[\p{Greek}\p{Han}]`, 50),
	} {
		tree, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatalf("%s: %v", pat, err)
		}
		cost := parseCost(pat) + programCost(tree, anchored(tree), 1<<40)
		got := allocated(func() {
			re := regexp.MustCompile(pat)
			in := &deadlineReader{deadline: time.Now().Add(time.Hour)}
			in.r.Reset(text)
			re.MatchReader(in)
		})
		if got > uint64(cost) {
			t.Errorf("%.40s: compiling and matching allocated %d bytes, more than its cost of %d", pat, got, cost)
		}
		t.Logf("%.30s: cost %d, allocated %d (%.1fx)", pat, cost, got, float64(cost)/float64(got))
	}
}

// TestExprUniqTimeLimit: uniq compares each element with every one it kept; over a long list of
// distinct values it must stop at the time limit like any loop.
func TestExprUniqTimeLimit(t *testing.T) {
	items := make([]any, 60_000)
	for i := range items {
		items[i] = float64(i)
	}
	prog, err := CompileExpr(`len(uniq(response)) > 0`, ExprLimits{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = EvalExpr(context.Background(), prog, ExprEnv{Response: items}, ExprLimits{Timeout: 50 * time.Millisecond})
	elapsed := time.Since(start)
	if !errors.Is(err, ErrExprLimit) || !strings.Contains(err.Error(), "longer than 50ms") {
		t.Errorf("err = %v, want the time limit", err)
	}
	// Generous slack for a loaded machine; without the check it runs for many seconds.
	if elapsed > 5*time.Second {
		t.Errorf("took %s, want it stopped near its 50ms limit", elapsed)
	}
}

// FuzzExprBudget: no expression, over any text, allocates more than its limits allow, and none
// panics past the VM.
func FuzzExprBudget(f *testing.F) {
	text := strings.Repeat("ab,c\n<é>", 50)
	for _, src := range []string{
		`len(split(text, "")) < 0`, `len(splitAfter(text, ",")) > 0`, `repeat(text, 1000) == ""`,
		`len(1..1000000) > 0`, `toJSON(response) != ""`, `string(response.deep) != ""`,
		`len(toJSON(map(1..50, response))) > 0`, `fromJSON(toJSON(response)) != nil`,
		`reduce(1..20, #acc + #acc, text) != ""`, `join(map(1..100, text)) != ""`,
		`replace(text, "", text) != ""`, `len(flatten(map(1..100, response.nested))) > 0`,
		`text matches repeat(".{1000}", 50)`, `uniq(split(text, "")) != nil`,
		`all(1..100, {len(upper(text + string(#))) > 0})`, `len(sortBy(split(text, ""), #)) > 0`,
		`text contains "é" and len(text) > 3`,
	} {
		f.Add(src, text)
	}
	env := semanticsEnv()
	bound := allocBound(budgetLimits)
	f.Fuzz(func(t *testing.T, src, text string) {
		prog, err := CompileExpr(src, budgetLimits)
		if err != nil {
			return
		}
		env := env
		env.Text = text
		var evalErr error
		alloc := allocated(func() {
			_, evalErr = EvalExpr(context.Background(), prog, env, budgetLimits)
		})
		if alloc > bound {
			t.Errorf("%s allocated %d bytes, over the bound of %d", src, alloc, bound)
		}
		if evalErr != nil && strings.HasPrefix(evalErr.Error(), "expression panicked") {
			t.Errorf("%s: %v", src, evalErr)
		}
	})
}
