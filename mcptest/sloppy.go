package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"unicode/utf8"
)

// The sloppy modes (Options.SloppyHTTP, SloppyJSONRPC, SloppyStdio, IgnoreCancel) make the
// reference server break rules of the protocol and its transports on purpose, so that the
// conformance probe has something to find. The well-behaved server is the default; these
// wrap it from the outside and change as little of it as they can.

// sloppyNotificationAnswer is the response a sloppy server sends to a notification.
var sloppyNotificationAnswer = []byte(`{"jsonrpc":"2.0","id":null,"result":{}}`)

// sloppyHTTP wraps the HTTP handler of a server with Options.SloppyHTTP or SloppyJSONRPC; it
// returns next unchanged when both are off.
func (s *Server) sloppyHTTP(next http.Handler) http.Handler {
	o := &s.Backend.opts
	if !o.SloppyHTTP && !o.SloppyJSONRPC {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.SloppyHTTP && !s.sloppyRequest(w, r) {
			return
		}
		if o.SloppyJSONRPC && r.Method == http.MethodPost && r.URL.Path == PathStreamable && isNotification(r) {
			// Answer the notification, which must get 202 with no body.
			next.ServeHTTP(&discardWriter{header: http.Header{}}, r)
			writeJSON(w, http.StatusOK, sloppyNotificationAnswer)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sloppyRequest rewrites r so that the server's checks let it through, or answers it itself;
// it reports whether the server should go on with r.
func (s *Server) sloppyRequest(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	r.Header.Del("Origin")
	r.Host = s.Addr
	if origin != "" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Allow-Credentials", "true")
	}
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		w.Header().Set("Access-Control-Allow-Headers", "*")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	if r.URL.Path != PathStreamable {
		return true
	}
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK) // and the session lives on
		return false
	case http.MethodGet:
		writeJSON(w, http.StatusOK, []byte("{}"))
		return false
	case http.MethodPost:
	default:
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxLineSize+1))
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	req, kind, _ := decodeFrame(body)
	if kind != kindRequest && kind != kindNotification {
		return true
	}
	if v := r.Header.Get(HeaderProtocolVersion); v != "" && !slices.Contains(LegacyVersions(), v) && !slices.Contains(StatelessVersions(), v) {
		r.Header.Del(HeaderProtocolVersion)
	}
	if metaOf(req.Params).ProtocolVersion != nil || req.Method == "server/discover" {
		r.Header.Set(HeaderMethod, req.Method) // whatever the client said
		r.Header.Del(HeaderName)
		return true
	}
	if req.Method != "initialize" && s.lookupSession(r.Header.Get(HeaderSessionID)) == nil {
		if id := s.anySession(); id != "" {
			r.Header.Set(HeaderSessionID, id)
		}
	}
	return true
}

// anySession returns the id of a live legacy session, or "".
func (s *Server) anySession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id := range s.sessions {
		return id
	}
	return ""
}

// isNotification reports whether r's body is one JSON-RPC notification; the body stays
// readable.
func isNotification(r *http.Request) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxLineSize+1))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	_, kind, _ := decodeFrame(body)
	return kind == kindNotification
}

// discardWriter is a ResponseWriter that throws the answer away.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// sloppyHandler is the dispatcher middleware of Options.SloppyJSONRPC.
type sloppyHandler struct {
	next handler
}

func (h *sloppyHandler) handle(ctx context.Context, p peer, req *request) *response {
	resp := h.next.handle(ctx, p, req)
	if req.isNotification() {
		if rw, ok := p.(rawWriter); ok {
			rw.writeRaw(sloppyNotificationAnswer)
		}
		return resp
	}
	if resp == nil {
		return nil
	}
	if resp.Error != nil && resp.Error.Code == CodeMethodNotFound {
		return resultResponse(req, map[string]any{})
	}
	if req.Method == "initialize" && resp.Error == nil {
		var params struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &params)
		if m, ok := resp.Result.(map[string]any); ok && params.ProtocolVersion != "" {
			m["protocolVersion"] = params.ProtocolVersion // agrees to anything
		}
	}
	return resp
}

// versionHandler is the dispatcher middleware of Options.AnswerVersion.
type versionHandler struct {
	next    handler
	version string
}

func (h *versionHandler) handle(ctx context.Context, p peer, req *request) *response {
	resp := h.next.handle(ctx, p, req)
	if req.Method == "initialize" && resp != nil && resp.Error == nil {
		if m, ok := resp.Result.(map[string]any); ok {
			m["protocolVersion"] = h.version
		}
	}
	return resp
}

// utf8Bug applies ReplaceInvalidUTF8 and CrashOnInvalidUTF8 to a received frame: it returns
// the frame to serve, or crash true when the server must die on it.
func (b *Backend) utf8Bug(data []byte) (out []byte, crash bool) {
	if utf8.Valid(data) {
		return data, false
	}
	switch {
	case b.opts.CrashOnInvalidUTF8:
		return nil, true
	case b.opts.ReplaceInvalidUTF8:
		return bytes.ToValidUTF8(data, []byte("\uFFFD")), false
	}
	return data, false
}

// rawWriter is a peer that can write a frame of its own (the frame transports).
type rawWriter interface {
	writeRaw(data []byte)
}

func (c *frameConn) writeRaw(data []byte) { c.write(data) }

// wrapSloppy installs the dispatcher middleware of the sloppy modes.
func (b *Backend) wrapSloppy() {
	if b.opts.SloppyJSONRPC {
		b.root = &sloppyHandler{next: b.root}
	}
	if b.opts.AnswerVersion != "" {
		b.root = &versionHandler{next: b.root, version: b.opts.AnswerVersion}
	}
}

// newFrameWriter returns the line writer of a newline-delimited connection: one message per
// line, or with Options.SloppyStdio a banner first and notifications over many lines (the
// answers stay on one line each, so that a client can still talk to the server).
func (b *Backend) newFrameWriter(w io.Writer) frameWriter {
	lw := newLineWriter(w)
	if !b.opts.SloppyStdio {
		return lw
	}
	_, _ = lw.bw.WriteString("mcptest (sloppy stdio) starting; this line is not JSON-RPC\n")
	_ = lw.bw.Flush()
	return &indentWriter{lw: lw}
}

// indentWriter writes each notification as indented JSON over several lines.
type indentWriter struct{ lw *lineWriter }

func (i *indentWriter) writeFrame(data []byte) error {
	var env envelope
	var out bytes.Buffer
	if json.Unmarshal(data, &env) != nil || env.Method == nil || env.ID != nil || json.Indent(&out, data, "", "  ") != nil {
		return i.lw.writeFrame(data)
	}
	return i.lw.writeFrame(out.Bytes())
}
