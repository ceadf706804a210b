package assert

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
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
	// by their elements' sizes plus 16 bytes an element); MaxTotalBytes bounds the sum over one
	// evaluation. Builtins that would build more (split, repeat, toJSON, keys, …) are refused
	// before they allocate, so an evaluation allocates a small multiple of these at most,
	// whatever its input.
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

// guardPatch wraps computed nodes in __guard(__budget, node), and routes what could allocate
// before the guard sees its value through a function that checks the budget first.
type guardPatch struct {
	budgeted map[string]budgetedBuiltin
}

// Visit implements ast.Visitor.
func (p guardPatch) Visit(node *ast.Node) {
	budget := func() ast.Node { return &ast.IdentifierNode{Value: "__budget"} }
	wrap := func(n ast.Node) ast.Node {
		return &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__guard"}, Arguments: []ast.Node{budget(), n}}
	}
	// call routes a budgeted builtin's call through __builtin.
	call := func(name string, args []ast.Node) ast.Node {
		return wrap(&ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: "__builtin"},
			Arguments: append([]ast.Node{budget(), &ast.StringNode{Value: name}}, args...),
		})
	}
	switch n := (*node).(type) {
	case *ast.PredicateNode:
		n.Node = wrap(n.Node)
	case *ast.BinaryNode:
		switch n.Operator {
		case "+":
			ast.Patch(node, wrap(&ast.CallNode{
				Callee:    &ast.IdentifierNode{Value: "__add"},
				Arguments: []ast.Node{budget(), n.Left, n.Right},
			}))
		case "*", "**":
			ast.Patch(node, wrap(n))
		case "matches":
			// The VM's own matches cannot be interrupted; __matches stops at the deadline.
			ast.Patch(node, &ast.CallNode{
				Callee:    &ast.IdentifierNode{Value: "__matches"},
				Arguments: []ast.Node{budget(), n.Left, n.Right},
			})
		}
	case *ast.BuiltinNode:
		if _, ok := p.budgeted[n.Name]; ok {
			ast.Patch(node, call(n.Name, n.Arguments))
			return
		}
		switch n.Name {
		case "map", "sortBy", "groupBy":
			n.Arguments[0] = &ast.CallNode{
				Callee:    &ast.IdentifierNode{Value: "__each"},
				Arguments: []ast.Node{budget(), &ast.StringNode{Value: n.Name}, n.Arguments[0]},
			}
		}
		ast.Patch(node, wrap(n))
	case *ast.ArrayNode, *ast.MapNode:
		ast.Patch(node, wrap(n))
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || id.Value == "__guard" {
			return
		}
		if _, ok := p.budgeted[id.Value]; ok {
			ast.Patch(node, call(id.Value, n.Arguments))
			return
		}
		ast.Patch(node, wrap(n))
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
func exprOptions(l ExprLimits, budgeted map[string]budgetedBuiltin) []expr.Option {
	budgetArg := func(name string, params []any) (*exprBudget, error) {
		b, ok := params[0].(*exprBudget)
		if !ok || b == nil {
			return nil, fmt.Errorf("%s: no budget", name)
		}
		return b, nil
	}
	// unguarded stands for join and replace in the type-checking compile, which never runs.
	unguarded := func(...any) (any, error) { return nil, errNoBudget }
	return []expr.Option{
		expr.Env(ExprEnv{}),
		expr.MaxNodes(l.MaxNodes),
		// Our join and replace: join takes any items (their string forms); replace, three strings.
		expr.Function("replace", unguarded, new(func(string, string, string) string)),
		expr.Function("join", unguarded, new(func([]any, string) string), new(func([]any) string),
			new(func([]string, string) string), new(func([]string) string)),
		expr.Function("__guard", func(params ...any) (any, error) {
			b, err := budgetArg("__guard", params)
			if err != nil {
				return nil, err
			}
			return params[1], b.guard(params[1])
		}, new(func(*exprBudget, any) any)),
		expr.Function("__builtin", func(params ...any) (any, error) {
			b, err := budgetArg("__builtin", params)
			if err != nil {
				return nil, err
			}
			name, _ := params[1].(string)
			return b.callBuiltin(budgeted, name, params[2:])
		}, new(func(*exprBudget, string, ...any) any)),
		expr.Function("__each", func(params ...any) (any, error) {
			b, err := budgetArg("__each", params)
			if err != nil {
				return nil, err
			}
			name, _ := params[1].(string)
			return b.each(name, params[2])
		}, new(func(*exprBudget, string, any) any)),
		expr.Function("__add", func(params ...any) (any, error) {
			b, err := budgetArg("__add", params)
			if err != nil {
				return nil, err
			}
			return b.add(params[1], params[2])
		}, new(func(*exprBudget, any, any) any)),
		expr.Function("__matches", func(params ...any) (any, error) {
			b, err := budgetArg("__matches", params)
			if err != nil {
				return nil, err
			}
			return b.match(params[1], params[2])
		}, new(func(*exprBudget, any, any) bool)),
	}
}

// compileGuarded compiles src with every computed node guarded (see [guardPatch]).
func compileGuarded(src string, l ExprLimits, opts ...expr.Option) (*vm.Program, error) {
	budgeted := budgetedBuiltins()
	opts = append(append(exprOptions(l, budgeted), opts...), expr.Patch(guardPatch{budgeted: budgeted}))
	return expr.Compile(src, opts...)
}

// CompileExpr compiles an expression that must return bool, under limits.
func CompileExpr(src string, limits ExprLimits) (*vm.Program, error) {
	return compileChecked(src, limits.withDefaults(), expr.AsBool())
}

// compileChecked type-checks src as the user wrote it (so AsBool and the builtins' argument
// checks are exact), then compiles it guarded.
func compileChecked(src string, l ExprLimits, opts ...expr.Option) (*vm.Program, error) {
	ri := &rejectInternal{}
	if _, err := expr.Compile(src, append(append(exprOptions(l, nil), opts...), expr.Patch(ri))...); err != nil {
		return nil, err
	}
	if ri.bad != "" {
		return nil, fmt.Errorf("identifier %q is reserved", ri.bad)
	}
	return compileGuarded(src, l, opts...)
}

// EvalExpr runs a compiled expression against env under limits; the result is the boolean.
func EvalExpr(ctx context.Context, prog *vm.Program, env ExprEnv, limits ExprLimits) (ok bool, err error) {
	out, err := runGuarded(ctx, prog, env, limits.withDefaults())
	if err != nil {
		return false, err
	}
	b, isBool := out.(bool)
	if !isBool {
		return false, fmt.Errorf("expression returned %T, not bool", out)
	}
	return b, nil
}

// runGuarded runs a program [compileGuarded] compiled against env under l (defaults filled).
func runGuarded(ctx context.Context, prog *vm.Program, env ExprEnv, l ExprLimits) (out any, err error) {
	env.Budget = &exprBudget{ctx: ctx, limits: l, deadline: time.Now().Add(l.Timeout)}
	if env.Vars == nil {
		env.Vars = map[string]any{}
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("expression panicked: %v", r)
		}
	}()
	machine := vm.VM{MemoryBudget: l.MemoryBudget}
	out, err = machine.Run(prog, env)
	var fe *file.Error
	if errors.As(err, &fe) && fe.Prev == nil && fe.Message == vmBudgetMessage {
		// The VM checks its budget before it builds a range, list or map: say which limit it is.
		fe.Message = fmt.Sprintf("%s: ranges (a..b), lists and maps the expression builds exceed its budget of %d elements; "+
			"iterate over the response, or a smaller range, instead", ErrExprLimit, l.MemoryBudget)
		fe.Prev = ErrExprLimit
	}
	return out, err
}

// vmBudgetMessage is the message of the expr VM's panic when its MemoryBudget is spent.
const vmBudgetMessage = "memory budget exceeded"

type exprChecker struct {
	src    string
	prog   *vm.Program
	limits ExprLimits
}

// exprTemplateRE matches a {{name}} variable reference written inside an expression.
var exprTemplateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\}\}`) })

// templateInExpr explains a {{name}} reference inside an expression: expressions are compiled
// once when the file loads, so such a reference would be compared as literal text.
func templateInExpr(src string) error {
	m := exprTemplateRE().FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	name := m[1]
	switch {
	case strings.HasPrefix(name, "secret.") || strings.HasPrefix(name, "env."):
		return fmt.Errorf("%s is not expanded inside an expression, and the process environment is not visible to one: "+
			"check it with an equals, contains or matches assertion instead", m[0])
	case exprIdentRE().MatchString(name):
		return fmt.Errorf("%s is not expanded inside an expression: write vars.%s", m[0], name)
	default:
		return fmt.Errorf("%s is not expanded inside an expression: write vars[%q]", m[0], name)
	}
}

// exprIdentRE matches a name usable after "vars.".
var exprIdentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

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
