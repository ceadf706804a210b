package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// completeTimeout bounds one completion/complete: the page asks as the person types, so an
// answer that comes later is of no use.
const completeTimeout = 5 * time.Second

// maxCompletions is how many values the page gets (the protocol caps a page at 100).
const maxCompletions = 100

// completeRef is the ref of completion/complete: a prompt by name or a resource template by URI.
type completeRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// completionJSON is the answer of POST /api/sessions/{id}/complete.
type completionJSON struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// complete is POST /api/sessions/{id}/complete {"ref": {"type": "ref/prompt", "name"} or
// {"type": "ref/resource", "uri"}, "argument", "value"}: the server's completion/complete.
func (ss *sessions) complete(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	var req struct {
		Ref      completeRef `json:"ref"`
		Argument string      `json:"argument"`
		Value    string      `json:"value"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	switch {
	case req.Ref.Type == "ref/prompt" && req.Ref.Name != "", req.Ref.Type == "ref/resource" && req.Ref.URI != "":
	default:
		writeError(w, http.StatusBadRequest, `ref must be {"type":"ref/prompt","name":…} or {"type":"ref/resource","uri":…}`)
		return
	}
	if req.Argument == "" {
		writeError(w, http.StatusBadRequest, "argument: name the argument to complete")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), completeTimeout)
	defer cancel()
	res, err := l.conn.Complete(ctx, req.Ref, req.Argument, req.Value)
	if err != nil {
		l.noteErr(err)
		writeFailure(w, http.StatusBadGateway, err)
		return
	}
	var doc struct {
		Completion struct {
			Values  []any `json:"values"`
			Total   int   `json:"total"`
			HasMore bool  `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(res.Result, &doc); err != nil {
		writeError(w, http.StatusBadGateway, "the server's completion is not {completion: {values: [...]}}: "+err.Error())
		return
	}
	out := completionJSON{Values: []string{}, Total: doc.Completion.Total, HasMore: doc.Completion.HasMore}
	for _, v := range doc.Completion.Values {
		if s, ok := v.(string); ok && len(out.Values) < maxCompletions {
			out.Values = append(out.Values, s)
		}
	}
	writeJSON(w, http.StatusOK, out)
}
