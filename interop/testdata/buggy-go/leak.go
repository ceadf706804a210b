package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The leak pair: render keeps each rendered page (32 KiB) under a fresh job id so job_status
// can return it. The buggy twin's map never evicts anything; the healthy twin keeps the latest
// 64 jobs.

const keepJobs = 64

type jobStore struct {
	buggy bool
	mu    sync.Mutex
	pages map[string][]byte
	order []string // ids oldest first (healthy twin)
}

func (s *jobStore) put(id string, page []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[id] = page
	if s.buggy {
		return
	}
	s.order = append(s.order, id)
	for len(s.order) > keepJobs {
		delete(s.pages, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *jobStore) get(id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pages[id]
	return p, ok
}

type renderIn struct {
	Text string `json:"text"`
}

type jobIn struct {
	Job string `json:"job"`
}

func leakServer(buggy bool) *mcp.Server {
	s := newServer("leak-go")
	jobs := &jobStore{buggy: buggy, pages: map[string][]byte{}}
	mcp.AddTool(s, &mcp.Tool{Name: "render", Description: "renders a page of text and keeps it for job_status"},
		func(_ context.Context, _ *mcp.CallToolRequest, in renderIn) (*mcp.CallToolResult, any, error) {
			var b [16]byte
			_, _ = rand.Read(b[:])
			id := hex.EncodeToString(b[:])
			page := []byte(strings.Repeat(in.Text+" ", 32768/(len(in.Text)+1)+1))[:32768]
			jobs.put(id, page)
			return text("job %s: rendered %d characters", id, len(in.Text)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "job_status", Description: "returns a rendered page"},
		func(_ context.Context, _ *mcp.CallToolRequest, in jobIn) (*mcp.CallToolResult, any, error) {
			p, ok := jobs.get(in.Job)
			if !ok {
				return nil, nil, errors.New("no such job")
			}
			return text("%s", p[:80]), nil, nil
		})
	return s
}
