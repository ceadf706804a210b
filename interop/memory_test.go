//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session"
)

// server-memory (stdio) keeps a knowledge graph in the JSONL file named by MEMORY_FILE_PATH;
// every tool declares an outputSchema and returns structuredContent (dist/index.js).

const memoryPkg = "@modelcontextprotocol/server-memory"

type memEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// TestMemory stores entities in server-memory and reads them back, through structured content
// and through the file the server persisted.
func TestMemory(t *testing.T) {
	p := requireNodePeer(t, memoryPkg)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store := filepath.Join(t.TempDir(), "memory.jsonl")
	env := append([]string{"MEMORY_FILE_PATH=" + store}, peerEnvExtra...)
	d := stdioDialer(t, []string{p.node, p.entry}, env, t.TempDir())
	log := newFrameLog()
	s := openStdioSession(t, ctx, d, &session.Options{ConnectTimeout: 20 * time.Second, RequestTimeout: 20 * time.Second, OnFrame: log.hook})

	if got := s.ServerInfo().Name; got != "memory-server" {
		t.Errorf("ServerInfo().Name = %q, want memory-server", got)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if len(findTool(t, tools, "create_entities").OutputSchema) == 0 {
		t.Errorf("create_entities has no outputSchema")
	}

	want := []memEntity{
		{Name: "Ada Lovelace", EntityType: "person", Observations: []string{"wrote the first program"}},
		{Name: "Analytical Engine", EntityType: "machine", Observations: []string{"designed by Babbage"}},
	}
	res, err := s.CallTool(ctx, "create_entities", map[string]any{"entities": want}, nil)
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %s", err, res.Raw)
	}
	var created struct {
		Entities []memEntity `json:"entities"`
	}
	if err := json.Unmarshal(res.StructuredContent, &created); err != nil {
		t.Fatalf("create_entities structuredContent %s: %v", res.StructuredContent, err)
	}
	if diff := cmp.Diff(want, created.Entities); diff != "" {
		t.Errorf("created entities (-want +got):\n%s", diff)
	}
	res, err = s.CallTool(ctx, "create_relations", map[string]any{"relations": []map[string]string{
		{"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"},
	}}, nil)
	if err != nil || res.IsError {
		t.Fatalf("create_relations: %v %s", err, res.Raw)
	}

	res, err = s.CallTool(ctx, "search_nodes", map[string]string{"query": "first program"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("search_nodes: %v %s", err, res.Raw)
	}
	var found struct {
		Entities []memEntity `json:"entities"`
	}
	if err := json.Unmarshal(res.StructuredContent, &found); err != nil {
		t.Fatalf("search_nodes structuredContent %s: %v", res.StructuredContent, err)
	}
	if len(found.Entities) != 1 || found.Entities[0].Name != "Ada Lovelace" {
		t.Errorf("search_nodes found %+v, want only Ada Lovelace", found.Entities)
	}

	res, err = s.CallTool(ctx, "read_graph", map[string]any{}, nil)
	if err != nil || res.IsError {
		t.Fatalf("read_graph: %v %s", err, res.Raw)
	}
	var graph struct {
		Entities  []memEntity `json:"entities"`
		Relations []struct {
			From, To, RelationType string
		} `json:"relations"`
	}
	if err := json.Unmarshal(res.StructuredContent, &graph); err != nil {
		t.Fatalf("read_graph structuredContent %s: %v", res.StructuredContent, err)
	}
	if len(graph.Entities) != 2 || len(graph.Relations) != 1 || graph.Relations[0].RelationType != "programmed" {
		t.Errorf("read_graph = %s, want 2 entities and the programmed relation", res.StructuredContent)
	}

	onDisk, err := os.ReadFile(store)
	if err != nil {
		t.Fatalf("the server did not persist its graph at MEMORY_FILE_PATH: %v", err)
	}
	if !strings.Contains(string(onDisk), `"Ada Lovelace"`) || !strings.Contains(string(onDisk), `"programmed"`) {
		t.Errorf("%s = %q, want the entities and the relation", store, onDisk)
	}
	checkFindings(t, s, log)
}
