package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The race pair: stock_report counts the items in stock. The buggy twin tallies into a
// package-level counter it resets at the start of each call (each access is locked, so Go's
// runtime sees no data race, but concurrent calls count each other's items). The healthy twin
// counts in a local variable. Both answers carry the time they were made, which varies by
// design; so does new_session's id.

var stock = map[string][]string{"north": {"bolt", "nut", "gear"}, "south": {"cog", "axle"}}

// tally is the buggy twin's running count.
var tally struct {
	mu    sync.Mutex
	items int
}

type stockIn struct {
	Warehouse string `json:"warehouse" jsonschema:"north, south or all"`
}

type stockOut struct {
	Warehouse   string `json:"warehouse"`
	Items       int    `json:"items"`
	GeneratedAt string `json:"generated_at"`
}

type sessionIn struct {
	User string `json:"user"`
}

type sessionOut struct {
	User    string `json:"user"`
	Session string `json:"session_id"`
}

func raceServer(buggy bool) *mcp.Server {
	s := newServer("race-go")
	mcp.AddTool(s, &mcp.Tool{Name: "stock_report", Description: "counts the items in stock"},
		func(_ context.Context, _ *mcp.CallToolRequest, in stockIn) (*mcp.CallToolResult, stockOut, error) {
			var names []string
			for w, items := range stock {
				if in.Warehouse == "all" || in.Warehouse == w {
					names = append(names, items...)
				}
			}
			count := 0
			if buggy {
				tally.mu.Lock()
				tally.items = 0
				tally.mu.Unlock()
			}
			for range names {
				time.Sleep(5 * time.Millisecond) // reading the item's row
				if buggy {
					tally.mu.Lock()
					tally.items++
					tally.mu.Unlock()
				} else {
					count++
				}
			}
			if buggy {
				tally.mu.Lock()
				count = tally.items
				tally.mu.Unlock()
			}
			return nil, stockOut{Warehouse: in.Warehouse, Items: count, GeneratedAt: time.Now().Format(time.RFC3339Nano)}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "new_session", Description: "opens a session for a user"},
		func(_ context.Context, _ *mcp.CallToolRequest, in sessionIn) (*mcp.CallToolResult, sessionOut, error) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			return nil, sessionOut{User: in.User, Session: hex.EncodeToString(b[:])}, nil
		})
	return s
}
