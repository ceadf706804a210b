package collection_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// TestQuickstartAgainstReferenceServer executes examples/quickstart.yaml step by step against
// the reference server (a minimal sequential runner) so the README's main example is known to
// pass: every assertion holds, every expected error comes, every extract resolves.
func TestQuickstartAgainstReferenceServer(t *testing.T) {
	c, err := collection.Load("../examples/quickstart.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Open(ctx, streamable.Dialer{URL: srv.URL}, nil)
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	defer s.Close()
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]json.RawMessage{}
	for _, tl := range tools {
		schemas[tl.Name] = tl.OutputSchema
	}
	vars := c.Vars()
	for _, tc := range c.Tests {
		t.Run(tc.ID, func(t *testing.T) {
			sub := runStep(ctx, t, s, tc, vars)
			if tcall, ok := tc.Step.(*collection.ToolCall); ok {
				sub.OutputSchema = schemas[tcall.Tool]
			}
			sub.Vars = vars
			if e := tc.ExpectError; e != nil {
				code := 0
				if m, ok := sub.Doc.(map[string]any)["error"].(map[string]any); ok {
					code = int(m["code"].(float64))
				}
				if !sub.IsError() || (e.Code != 0 && e.Code != code) || !strings.Contains(sub.Text(), e.Message) {
					t.Errorf("expected error %+v, got %s", e, sub.Raw)
				}
			} else if sub.IsError() {
				t.Errorf("unexpected error: %s", sub.Raw)
			}
			for _, a := range tc.Assertions {
				if f := a.Checker.Check(ctx, sub); f != nil {
					t.Errorf("%s: %s", a.Pos, f.Message)
				}
			}
			for _, ex := range tc.Extract {
				v, err := ex.Path.Lookup(ctx, sub.Doc)
				if err != nil {
					t.Fatalf("extract %s: %v", ex.Name, err)
				}
				vars.Set(ex.Name, v)
			}
		})
	}
}

// runStep sends one step and returns its subject; a JSON-RPC error becomes a KindError subject.
func runStep(ctx context.Context, t *testing.T, s *session.Session, tc *collection.Test, vars *collection.Vars) *assert.Subject {
	t.Helper()
	expand := func(str string) string {
		out, err := vars.ExpandString(str)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var (
		raw json.RawMessage
		err error
	)
	switch st := tc.Step.(type) {
	case *collection.ToolCall:
		in, xerr := vars.ExpandMap(st.Input)
		if xerr != nil {
			t.Fatal(xerr)
		}
		var res *session.ToolResult
		if res, err = s.CallTool(ctx, st.Tool, in, nil); err == nil {
			raw = res.Raw
		}
	case *collection.ReadResource:
		var r *session.Response
		if r, err = s.ReadResource(ctx, expand(st.URI)); err == nil {
			raw = r.Result
		}
	case *collection.GetPrompt:
		args := map[string]string{}
		for k, v := range st.Arguments {
			args[k] = expand(v)
		}
		var r *session.Response
		if r, err = s.GetPrompt(ctx, st.Name, args); err == nil {
			raw = r.Result
		}
	case *collection.List:
		var items []json.RawMessage
		if st.What != "tools" {
			t.Fatalf("list %s not handled by this test", st.What)
		}
		tools, lerr := s.ListTools(ctx)
		for _, tl := range tools {
			items = append(items, tl.Raw)
		}
		err = lerr
		raw, _ = json.Marshal(map[string]any{"items": items})
	case *collection.Complete:
		ref := map[string]string{"type": st.RefType}
		if st.RefType == "ref/prompt" {
			ref["name"] = st.RefName
		} else {
			ref["uri"] = st.RefName
		}
		var r *session.Response
		if r, err = s.Complete(ctx, ref, st.ArgName, expand(st.ArgValue)); err == nil {
			raw = r.Result
		}
	case *collection.Request:
		var r *session.Response
		if r, err = s.Request(ctx, st.Method, st.Params); err == nil {
			raw = r.Result
		}
	}
	kind := tc.Kind()
	if err != nil {
		var se *session.Error
		if !errors.As(err, &se) || se.Code == 0 {
			t.Fatalf("request failed: %v", err)
		}
		raw, _ = json.Marshal(map[string]any{"error": map[string]any{"code": se.Code, "message": se.Message}})
		kind = assert.KindError
	}
	sub, err := assert.NewSubject(kind, raw)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
