package main

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The head-of-line pair: a slow report and a fast lookup over one "database". The buggy twin
// guards its connection with a package-level mutex held for the whole query, so a lookup waits
// for any report in progress. The healthy twin opens a connection per query (a pool would do
// as well) and needs no lock.

// conn is a stand-in for a database connection that is not safe for concurrent use.
type conn struct{}

var birthYears = map[string]int{"ada": 1815, "grace": 1906, "alan": 1912}

func (conn) query(key string, d time.Duration) int {
	time.Sleep(d)
	return birthYears[key]
}

var (
	dbMu     sync.Mutex
	sharedDB conn
)

func runQuery(buggy bool, key string, d time.Duration) int {
	if buggy {
		dbMu.Lock()
		defer dbMu.Unlock()
		return sharedDB.query(key, d)
	}
	var c conn
	return c.query(key, d)
}

type reportIn struct {
	Year int `json:"year"`
}

type lookupIn struct {
	Name string `json:"name"`
}

func holServer(buggy bool) *mcp.Server {
	s := newServer("hol-go")
	mcp.AddTool(s, &mcp.Tool{Name: "yearly_report", Description: "builds the yearly report (takes a while)"},
		func(_ context.Context, _ *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, any, error) {
			runQuery(buggy, "ada", 500*time.Millisecond)
			return text("report %d: 3 people", in.Year), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Description: "the birth year of a person"},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
			return text("%s: %d", in.Name, runQuery(buggy, in.Name, time.Millisecond)), nil, nil
		})
	return s
}
