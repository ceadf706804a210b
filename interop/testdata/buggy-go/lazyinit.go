package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The lazy-init pair: search's index client is created on first use. Connecting is slow, so
// it is done outside the mutex, and calls that arrive meanwhile wait for the first to finish.
// The buggy twin waits while still holding the mutex the connecting goroutine needs to publish
// the client: one call at a time never waits, two first calls at once deadlock for good. The
// healthy twin unlocks before waiting.

// indexClient is a stand-in for a client of a search index.
type indexClient struct{ docs map[string]int }

func connectIndex() *indexClient {
	time.Sleep(200 * time.Millisecond) // dialing the index
	return &indexClient{docs: map[string]int{"mcp": 3, "json": 5, "go": 8}}
}

// lazyIndex creates the client on first use.
type lazyIndex struct {
	buggy  bool
	mu     sync.Mutex
	client *indexClient
	ready  chan struct{} // closed once client is set; nil until someone connects
}

func (l *lazyIndex) get() *indexClient {
	l.mu.Lock()
	if l.client != nil {
		c := l.client
		l.mu.Unlock()
		return c
	}
	if l.ready != nil {
		// Someone is connecting: wait for them.
		if l.buggy {
			<-l.ready // still holding l.mu
			c := l.client
			l.mu.Unlock()
			return c
		}
		ready := l.ready
		l.mu.Unlock()
		<-ready
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.client
	}
	l.ready = make(chan struct{})
	l.mu.Unlock()
	c := connectIndex()
	l.mu.Lock()
	l.client = c
	l.mu.Unlock()
	close(l.ready)
	return c
}

type searchIn struct {
	Term string `json:"term" jsonschema:"the term to look for"`
}

type searchOut struct {
	Matches int `json:"matches"`
}

func lazyInitServer(buggy bool) *mcp.Server {
	s := newServer("lazyinit-go")
	idx := &lazyIndex{buggy: buggy}
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "counts the documents matching a term"},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			return nil, searchOut{Matches: idx.get().docs[strings.ToLower(in.Term)]}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "version", Description: "the server's version"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("lazyinit-go 1.0.0"), nil, nil
		})
	return s
}
