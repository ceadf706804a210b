package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The crash pair: list_files is registered with a hand-written schema and a raw handler that
// decodes its arguments into a map, as servers ported from other SDKs do. The SDK does not
// validate a raw handler's arguments, nor recover a panicking handler. The buggy twin asserts
// limit is a number: any other type panics and the process dies. The healthy twin checks the
// type and answers with a tool error.

var listFilesSchema = json.RawMessage(`{"type":"object","properties":{
  "dir":{"type":"string","description":"the directory"},
  "limit":{"type":"integer","description":"at most this many entries"}},"required":["dir"]}`)

var files = []string{"a.txt", "b.txt", "c.txt", "d.txt"}

func crashServer(buggy bool) *mcp.Server {
	s := newServer("crash-go")
	s.AddTool(&mcp.Tool{Name: "list_files", Description: "lists the files of a directory", InputSchema: listFilesSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return toolError("arguments: %v", err), nil
			}
			limit := len(files)
			if v, ok := args["limit"]; ok {
				if buggy {
					limit = int(v.(float64))
				} else {
					f, isNum := v.(float64)
					if !isNum {
						return toolError("limit must be an integer, not %T", v), nil
					}
					limit = int(f)
				}
			}
			limit = max(0, min(limit, len(files)))
			dir, _ := args["dir"].(string)
			return text("%s: %s", dir, strings.Join(files[:limit], ", ")), nil
		})
	return s
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
