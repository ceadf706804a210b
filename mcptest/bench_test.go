package mcptest_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
)

// BenchmarkEchoTCP measures one sequential echo round trip over TCP.
func BenchmarkEchoTCP(b *testing.B) {
	s := mcptest.NewTCPServer(nil)
	defer s.Close()
	c := dialTCP(b, s)
	c.initialize()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, i+100))
		c.recvRaw()
	}
}

// BenchmarkEchoStreamable measures one sequential echo POST over Streamable HTTP.
func BenchmarkEchoStreamable(b *testing.B) {
	s := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy})
	defer s.Close()
	tr := &http.Transport{} // keep-alive: measure the server, not connection setup
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	sid := do(b, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	hdr := map[string]string{mcptest.HeaderSessionID: sid}
	b.ReportAllocs()
	for b.Loop() {
		do(b, hc, "POST", s.URL, hdr, rpc(2, "tools/call", echoCall("x")))
	}
}
