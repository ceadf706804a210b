//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// server-everything 2026.8.31 registers simulate-research-query (dist/tools/
// simulate-research-query.js) after initialized, with execution.taskSupport "required", on a
// server whose capabilities declare tasks {list, cancel, requests.tools.call}
// (dist/server/index.js, InMemoryTaskStore and InMemoryTaskMessageQueue of the TypeScript SDK):
//   - a tools/call without params.task is answered with an isError result ("requires task
//     augmentation"), since McpServer wraps the -32601 as a tool error;
//   - with params.task: a CreateTaskResult (ttl 300000, pollInterval 1000), then four stages of
//     one second each, then the report as one text content;
//   - with ambiguous true and a client that declared elicitation, at the third stage the task
//     goes input_required and queues elicitation/create (with the related-task _meta), which
//     the SDK delivers only on the stream of a tasks/result; the accepted interpretation ends
//     up in the report as "**Clarification**: <interpretation>".

// TestEverythingTasks calls simulate-research-query through the session, which must make it a
// task, over stdio and Streamable HTTP, plainly and with the ambiguous (input_required →
// elicitation) path.
func TestEverythingTasks(t *testing.T) {
	t.Parallel()
	p := requireNodePeer(t, everythingPkg)
	transports := []struct {
		name string
		dial func(t *testing.T) transport.Dialer
	}{
		{"stdio", func(t *testing.T) transport.Dialer {
			return stdioDialer(t, []string{p.node, p.entry, "stdio"}, peerEnvExtra, t.TempDir())
		}},
		{"streamableHttp", func(t *testing.T) transport.Dialer {
			srv := startHTTPPeer(t, p, "streamableHttp")
			return streamableDialer(t, srv.base+"/mcp")
		}},
	}
	cases := []struct {
		name      string
		ambiguous bool
		want      []string
	}{
		{"plain", false, []string{"# Research Report: quantum tunnelling\n", "Stage 4: Generating report ✓"}},
		{"ambiguous", true, []string{"# Research Report: quantum tunnelling (historical)", "**Clarification**: historical", "`input_required`"}},
	}
	for _, tr := range transports {
		for _, c := range cases {
			t.Run(tr.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				log := newFrameLog()
				var elicitations atomic.Int64
				opts := &session.Options{
					ConnectTimeout: 20 * time.Second,
					RequestTimeout: 30 * time.Second,
					OnFrame: func(dir session.Direction, f transport.Frame) {
						log.hook(dir, f)
						if dir == session.Received && strings.Contains(string(f.Data), `"method":"elicitation/create"`) &&
							strings.Contains(string(f.Data), session.RelatedTaskMetaKey) {
							elicitations.Add(1)
						}
					},
					ElicitationReply: json.RawMessage(`{"action":"accept","content":{"interpretation":"historical"}}`),
				}
				var s *session.Session
				if tr.name == "stdio" {
					s = openStdioSession(t, ctx, tr.dial(t), opts)
				} else {
					s = openSession(t, ctx, tr.dial(t), opts)
				}
				if s.ProtocolVersion() != session.Version20251125 {
					t.Fatalf("ProtocolVersion() = %s, want %s", s.ProtocolVersion(), session.Version20251125)
				}
				tool := listUntil(t, ctx, s, "simulate-research-query")
				if tool.Execution == nil || tool.Execution.TaskSupport != session.TaskSupportRequired {
					t.Fatalf("simulate-research-query execution = %+v, want taskSupport required", tool.Execution)
				}
				res, err := s.CallTool(ctx, "simulate-research-query", map[string]any{"topic": "quantum tunnelling", "ambiguous": c.ambiguous}, nil)
				if err != nil {
					t.Fatalf("CallTool(simulate-research-query): %v", err)
				}
				if res.IsError {
					t.Fatalf("simulate-research-query: isError: %s", res.Raw)
				}
				text := textContent(t, res.Content)
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("report lacks %q:\n%s", w, text)
					}
				}
				// Four one-second stages, all inside the call's timing.
				if res.Timing.Latency < 4*time.Second {
					t.Errorf("latency %v, want the whole flow (>= 4s of stages)", res.Timing.Latency)
				}
				if n := log.count("tools/call"); n != 1 {
					t.Errorf("%d tools/call sent, want 1", n)
				}
				if n := log.count("tasks/result"); n != 1 {
					t.Errorf("%d tasks/result sent, want 1", n)
				}
				if c.ambiguous {
					if n := elicitations.Load(); n != 1 {
						t.Errorf("%d elicitation/create with the related-task _meta received, want 1", n)
					}
				}
				tasks, err := s.ListTasks(ctx)
				if err != nil {
					t.Fatalf("ListTasks: %v", err)
				}
				if len(tasks) != 1 || tasks[0].Status != session.TaskCompleted || tasks[0].PollInterval != time.Second {
					t.Errorf("ListTasks = %+v, want one completed task polled every second", tasks)
				}
				checkFindings(t, s, log)
			})
		}
	}
}

// listUntil lists the tools until name is among them (server-everything registers some only
// once initialized has been handled), bounded by ctx and 5 seconds.
func listUntil(t *testing.T, ctx context.Context, s *session.Session, name string) session.Tool {
	t.Helper()
	var names []string
	var found session.Tool
	if !poll.Within(5*time.Second, func() bool {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		for _, tl := range tools {
			if tl.Name == name {
				found = tl
				return true
			}
		}
		names = toolNames(tools)
		return false
	}) {
		t.Fatalf("tools/list never listed %q: %v", name, slices.Clip(names))
	}
	return found
}
