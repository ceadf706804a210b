package mcptest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpspec/mcpspec/mcptest"
)

func ExampleNewServer() {
	srv := mcptest.NewServer(&mcptest.Options{HangFirstCall: true})
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var reply struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&reply)
	fmt.Println(resp.StatusCode, reply.Result.ProtocolVersion, resp.Header.Get(mcptest.HeaderSessionID) != "")
	// Output: 200 2025-06-18 true
}

func ExampleServe() {
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcptest.Serve(context.Background(), struct {
			io.Reader
			io.Writer
		}{serverR, serverW}, nil)
	}()

	fmt.Fprintln(clientW, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	line, _ := bufio.NewReader(clientR).ReadString('\n')
	var reply struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
			ResultType        string   `json:"resultType"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(line), &reply)
	fmt.Println(reply.Result.SupportedVersions[0], reply.Result.ResultType)

	clientW.Close() // EOF ends the session
	serverW.Close()
	fmt.Println(<-done)
	// Output:
	// 2026-07-28 complete
	// <nil>
}

func ExampleFlakyRoll() {
	roll := mcptest.FlakyRoll("mcpspec", 2)
	fmt.Printf("%.4f %s\n", roll, mcptest.FlakyFailureMessage(roll, 0.5))
	// Output: 0.3002 flaky failure (roll=0.3002 < rate=0.5000)
}
