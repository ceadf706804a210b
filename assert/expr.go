package assert

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/mcpspec/mcpspec/result"
)

// ExprLimits bounds one expression. Zero fields take the value of [DefaultExprLimits].
type ExprLimits struct {
	// MaxNodes bounds the expression's size (AST nodes) at compile time.
	MaxNodes uint
	// MemoryBudget is the expr VM's allocation budget (ranges, arrays, maps; VM units).
	MemoryBudget uint
	// MaxSteps bounds the closure iterations and guarded operations of one evaluation.
	MaxSteps int
	// Timeout bounds one evaluation's wall-clock time (checked between guarded operations).
	Timeout time.Duration
	// MaxValueBytes bounds the size of any one computed value (strings in bytes, collections
	// by their elements' sizes); MaxTotalBytes bounds the sum over one evaluation.
	MaxValueBytes int
	MaxTotalBytes int
}

// DefaultExprLimits returns the limits used when a field is zero.
func DefaultExprLimits() ExprLimits {
	return ExprLimits{
		MaxNodes:      1000,
		MemoryBudget:  1_000_000,
		MaxSteps:      1_000_000,
		Timeout:       time.Second,
		MaxValueBytes: 1 << 20,
		MaxTotalBytes: 32 << 20,
	}
}

// withDefaults fills zero fields.
func (l ExprLimits) withDefaults() ExprLimits {
	d := DefaultExprLimits()
	if l.MaxNodes == 0 {
		l.MaxNodes = d.MaxNodes
	}
	if l.MemoryBudget == 0 {
		l.MemoryBudget = d.MemoryBudget
	}
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxValueBytes == 0 {
		l.MaxValueBytes = d.MaxValueBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	return l
}

// ExprEnv is what an expression sees. Field tags give the names used in expressions.
type ExprEnv struct {
	// Response is the decoded result document ("$" of JSONPath).
	Response any `expr:"response"`
	// Vars are the test's variables.
	Vars map[string]any `expr:"vars"`
	// Latency is the request's wire latency in milliseconds.
	Latency float64 `expr:"latency"`
	// IsError is the tool result's isError flag (true for an expected JSON-RPC error).
	IsError bool `expr:"isError"`
	// Text is the response text (see [Subject.Text]).
	Text string `expr:"text"`

	// Budget is the per-evaluation guard; expressions cannot usefully touch it.
	Budget *exprBudget `expr:"__budget"`
}

// ErrExprLimit reports that an expression exceeded one of its [ExprLimits].
var ErrExprLimit = errors.New("expression limit exceeded")

// exprBudget is the per-evaluation state of the guard function.
type exprBudget struct {
	ctx      context.Context
	limits   ExprLimits
	deadline time.Time
	steps    int
	total    int
	// regexps caches the patterns `matches` compiled during this evaluation.
	regexps map[string]*regexp.Regexp
}

// guard is called around every closure body, "+", builtin call and collection literal: it
// counts steps, checks the clock and the context, and measures the value produced.
func (b *exprBudget) guard(v any) error {
	b.steps++
	if b.steps > b.limits.MaxSteps {
		return fmt.Errorf("%w: more than %d steps", ErrExprLimit, b.limits.MaxSteps)
	}
	if b.steps&15 == 0 {
		if time.Now().After(b.deadline) {
			return fmt.Errorf("%w: evaluation took longer than %s", ErrExprLimit, b.limits.Timeout)
		}
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	n := measure(v, b.limits.MaxValueBytes+1)
	if n > b.limits.MaxValueBytes {
		return fmt.Errorf("%w: a computed value exceeds %d bytes", ErrExprLimit, b.limits.MaxValueBytes)
	}
	b.total += n
	if b.total > b.limits.MaxTotalBytes {
		return fmt.Errorf("%w: computed values exceed %d bytes in total", ErrExprLimit, b.limits.MaxTotalBytes)
	}
	return nil
}

// measure estimates the size of v, stopping once it exceeds limit.
func measure(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := len(x)
		for _, e := range x {
			if n > limit {
				return n
			}
			n += measure(e, limit-n)
		}
		return n
	case map[string]any:
		n := len(x)
		for k, e := range x {
			if n > limit {
				return n
			}
			n += len(k) + measure(e, limit-n)
		}
		return n
	case []string:
		n := len(x)
		for _, e := range x {
			n += len(e)
			if n > limit {
				return n
			}
		}
		return n
	}
	return 8
}

// guardPatch wraps computed nodes in __guard(__budget, node).
type guardPatch struct{}

// Visit implements ast.Visitor.
func (guardPatch) Visit(node *ast.Node) {
	wrap := func(n ast.Node) ast.Node {
		return &ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: "__guard"},
			Arguments: []ast.Node{&ast.IdentifierNode{Value: "__budget"}, n},
		}
	}
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		n.Node = wrap(n.Node)
	case *ast.BinaryNode:
		switch n.Operator {
		case "+", "*", "**":
			ast.Patch(node, wrap(n))
		case "matches":
			// The VM's own matches cannot be interrupted; __matches stops at the deadline.
			ast.Patch(node, &ast.CallNode{
				Callee:    &ast.IdentifierNode{Value: "__matches"},
				Arguments: []ast.Node{&ast.IdentifierNode{Value: "__budget"}, n.Left, n.Right},
			})
		}
	case *ast.BuiltinNode, *ast.ArrayNode, *ast.MapNode:
		ast.Patch(node, wrap(n))
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value != "__guard" {
			ast.Patch(node, wrap(n))
		}
	}
}

// rejectInternal refuses expressions naming the guard's internals.
type rejectInternal struct{ bad string }

// Visit implements ast.Visitor.
func (r *rejectInternal) Visit(node *ast.Node) {
	if id, ok := (*node).(*ast.IdentifierNode); ok && strings.HasPrefix(id.Value, "__") {
		r.bad = id.Value
	}
}

// exprOptions are the compile options shared by the checking and the guarded compile.
func exprOptions(l ExprLimits) []expr.Option {
	return []expr.Option{
		expr.Env(ExprEnv{}),
		expr.AsBool(),
		expr.MaxNodes(l.MaxNodes),
		// Amplifiers that allocate before any guard could measure: replaced by bounded versions.
		expr.DisableBuiltin("repeat"),
		expr.DisableBuiltin("replace"),
		expr.DisableBuiltin("join"),
		expr.Function("replace", safeReplace(l), new(func(string, string, string) string)),
		expr.Function("join", safeJoin(l), new(func([]any, string) string), new(func([]any) string)),
		expr.Function("__guard", func(params ...any) (any, error) {
			b, ok := params[0].(*exprBudget)
			if !ok || b == nil {
				return nil, errors.New("__guard: no budget")
			}
			return params[1], b.guard(params[1])
		}, new(func(*exprBudget, any) any)),
		expr.Function("__matches", func(params ...any) (any, error) {
			b, ok := params[0].(*exprBudget)
			if !ok || b == nil {
				return nil, errors.New("__matches: no budget")
			}
			return b.match(params[1], params[2])
		}, new(func(*exprBudget, any, any) bool)),
	}
}

// safeReplace is strings.ReplaceAll refusing results larger than MaxValueBytes.
func safeReplace(l ExprLimits) func(params ...any) (any, error) {
	return func(params ...any) (any, error) {
		s, _ := params[0].(string)
		old, _ := params[1].(string)
		repl, _ := params[2].(string)
		n := strings.Count(s, old)
		if old == "" {
			n = len(s) + 1
		}
		if size := len(s) + n*(len(repl)-len(old)); size > l.MaxValueBytes {
			return nil, fmt.Errorf("%w: replace would produce %d bytes", ErrExprLimit, size)
		}
		return strings.ReplaceAll(s, old, repl), nil
	}
}

// safeJoin joins the string forms of items, refusing results larger than MaxValueBytes.
func safeJoin(l ExprLimits) func(params ...any) (any, error) {
	return func(params ...any) (any, error) {
		items, _ := params[0].([]any)
		sep := ""
		if len(params) > 1 {
			sep, _ = params[1].(string)
		}
		var sb strings.Builder
		for i, it := range items {
			if i > 0 {
				sb.WriteString(sep)
			}
			sb.WriteString(ToString(it))
			if sb.Len() > l.MaxValueBytes {
				return nil, fmt.Errorf("%w: join would produce more than %d bytes", ErrExprLimit, l.MaxValueBytes)
			}
		}
		return sb.String(), nil
	}
}

// CompileExpr compiles an expression that must return bool, under limits.
func CompileExpr(src string, limits ExprLimits) (*vm.Program, error) {
	l := limits.withDefaults()
	ri := &rejectInternal{}
	// The first compile type-checks the expression as the user wrote it (so AsBool is exact).
	if _, err := expr.Compile(src, append(exprOptions(l), expr.Patch(ri))...); err != nil {
		return nil, err
	}
	if ri.bad != "" {
		return nil, fmt.Errorf("identifier %q is reserved", ri.bad)
	}
	// The second compile is what runs: every computed node goes through the guard.
	return expr.Compile(src, append(exprOptions(l), expr.Patch(guardPatch{}))...)
}

// EvalExpr runs a compiled expression against env under limits; the result is the boolean.
func EvalExpr(ctx context.Context, prog *vm.Program, env ExprEnv, limits ExprLimits) (ok bool, err error) {
	l := limits.withDefaults()
	env.Budget = &exprBudget{ctx: ctx, limits: l, deadline: time.Now().Add(l.Timeout)}
	if env.Vars == nil {
		env.Vars = map[string]any{}
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("expression panicked: %v", r)
		}
	}()
	machine := vm.VM{MemoryBudget: l.MemoryBudget}
	out, err := machine.Run(prog, env)
	if err != nil {
		return false, err
	}
	b, isBool := out.(bool)
	if !isBool {
		return false, fmt.Errorf("expression returned %T, not bool", out)
	}
	return b, nil
}

type exprChecker struct {
	src    string
	prog   *vm.Program
	limits ExprLimits
}

// exprTemplateRE matches a {{name}} variable reference written inside an expression.
var exprTemplateRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}`)

// templateInExpr explains a {{name}} reference inside an expression: expressions are compiled
// once when the file loads, so such a reference would be compared as literal text.
func templateInExpr(src string) error {
	m := exprTemplateRE.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	name := m[1]
	switch {
	case strings.HasPrefix(name, "secret.") || strings.HasPrefix(name, "env."):
		return fmt.Errorf("%s is not expanded inside an expression, and the process environment is not visible to one: "+
			"check it with an equals, contains or matches assertion instead", m[0])
	case exprIdentRE.MatchString(name):
		return fmt.Errorf("%s is not expanded inside an expression: write vars.%s", m[0], name)
	default:
		return fmt.Errorf("%s is not expanded inside an expression: write vars[%q]", m[0], name)
	}
}

// exprIdentRE matches a name usable after "vars.".
var exprIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func compileExpr(spec *Spec, opts *CompileOptions) (Checker, error) {
	if err := templateInExpr(spec.Expr); err != nil {
		return nil, &SpecError{Field: "expr", Err: err}
	}
	prog, err := CompileExpr(spec.Expr, opts.Expr)
	if err != nil {
		return nil, &SpecError{Field: "expr", Err: err}
	}
	return &exprChecker{src: spec.Expr, prog: prog, limits: opts.Expr}, nil
}

func (c *exprChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	env := ExprEnv{
		Response: s.Doc,
		Vars:     s.vars(),
		Latency:  float64(s.Latency) / float64(time.Millisecond),
		IsError:  s.IsError(),
		Text:     s.Text(),
	}
	ok, err := EvalExpr(ctx, c.prog, env, c.limits)
	if err != nil {
		return failure("expr", "", c.src, "", "expression %q failed: %v", c.src, truncate(err.Error(), maxResponse))
	}
	if ok {
		return nil
	}
	return failure("expr", "", c.src, "false",
		"expression %q is false; response %s", c.src, Excerpt(s.Doc, maxResponse))
}
