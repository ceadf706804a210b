package streamable

import (
	"crypto/tls"
	"net/http"
	"net/url"
)

// do sends a POST and returns its answer as [http.Client.Do] would. When the Client would add
// nothing but the following of redirects (no cookie jar, no timeout, no credentials in the URL,
// net/http's own Transport), the request goes straight to the Transport: that skips the Client's
// copies of the URL and headers and, above all, its three frames (≈ 1.1 KB) on the stack of a
// caller that waits for the status (see [post]). A redirect is then re-sent through the Client,
// which follows it exactly as it would have.
func (c *Conn) do(req *http.Request) (*http.Response, error) {
	rt := c.transport(req)
	if rt == nil {
		return c.client.Do(req)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, clientError(req, err)
	}
	if redirected(resp) {
		return c.redirect(req, resp)
	}
	return resp, nil
}

// transport returns the Transport to send req with directly, or nil when only the Client does
// everything req needs.
func (c *Conn) transport(req *http.Request) *http.Transport {
	cl := c.client
	if cl.Jar != nil || cl.Timeout != 0 || req.URL.User != nil || req.Method != http.MethodPost {
		return nil
	}
	switch rt := cl.Transport.(type) {
	case nil:
		tr, _ := http.DefaultTransport.(*http.Transport)
		return tr
	case *http.Transport:
		return rt
	}
	return nil
}

// redirected reports whether the Client would follow resp: a redirect status with a Location
// (net/http's Client returns a 3xx without one as the answer).
func redirected(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// redirect sends req again through the Client, which follows the redirect resp announced (and
// applies its CheckRedirect): a rare path, which costs one more request to the original URL.
func (c *Conn) redirect(req *http.Request, resp *http.Response) (*http.Response, error) {
	resp.Body.Close()
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, clientError(req, err)
		}
		again.Body = body
	}
	return c.client.Do(again)
}

// clientError is the error Client.Do returns when the Transport failed to send req.
func clientError(req *http.Request, err error) error {
	if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
		err = http.ErrSchemeMismatch
	}
	return &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
}
