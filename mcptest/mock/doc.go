// Package mock serves a recording ([recording.Recording]) as an MCP server: each request is
// answered with the answer recorded for it, with the request's own id, so that clients and
// agents can be tested offline against a server's real answers.
//
// How a request finds its recorded answer is the [Match] mode: [Exact] (same method and
// params, ids, progress tokens and _meta aside), [ByMethod] (the first unused answer of that method)
// or [Sequential] (the recorded requests in order). initialize, server/discover, ping and
// notifications are always answered by method. A request that matches nothing gets a JSON-RPC error saying what
// it did not match and the nearest recorded request.
package mock
