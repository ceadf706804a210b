package runner

import (
	"context"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner/gates"
	"github.com/mcpspec/mcpspec/session"
)

// runGates runs the collection's tokens:, score: and retrieval: blocks after its tests, each on
// a session of its server, as one test each (see package gates).
func (cr *colRun) runGates(ctx context.Context) {
	col := cr.col
	if col.Tokens != nil {
		cr.runGate(ctx, "tokens", col.Tokens.Server, func(ctx context.Context, s *session.Session, name string) *result.Test {
			return gates.Tokens(ctx, s, name, col.Tokens)
		})
	}
	if col.Score != nil {
		cr.runGate(ctx, "score", col.Score.Server, func(ctx context.Context, s *session.Session, name string) *result.Test {
			return gates.Score(ctx, s, name, col.Score)
		})
	}
	if col.Retrieval != nil {
		cr.runGate(ctx, "retrieval", col.Retrieval.Server, func(ctx context.Context, s *session.Session, name string) *result.Test {
			return gates.Retrieval(ctx, s, name, col.Retrieval)
		})
	}
}

// runGate acquires a session of server (the default server when "") and adds the test gate
// returns; a server that cannot be reached makes the test errored.
func (cr *colRun) runGate(ctx context.Context, id, server string, gate func(context.Context, *session.Session, string) *result.Test) {
	if ctx.Err() != nil {
		return
	}
	if server == "" {
		server = cr.col.DefaultServer
	}
	p, ok := cr.pools[server]
	if !ok {
		cr.addTests(&result.Test{ID: id, Name: id + " " + server, Server: server, Kind: id, Status: result.Errored,
			Error: &result.Error{Category: result.ServerError, Message: "the collection has no server " + server}})
		return
	}
	c, rerr := p.acquire(ctx)
	if rerr != nil {
		cr.addTests(&result.Test{ID: id, Name: id + " " + server, Server: server, Kind: id, Status: result.Errored, Error: rerr})
		return
	}
	t := gate(ctx, c.Session, server)
	p.release(c, t.Status == result.Errored)
	cr.addTests(t)
}
