// Command loadbench measures the load path against peers, in one run: throughput against the
// bench's echo server (the raw client, mcpspec's session, `mcpspec load` and mcp-stress, 10
// concurrent), and the latency truth (the reference server with a known delay distribution
// and a 2 s stall, measured by open- and closed-model clients next to the truth), over stdio
// and over Streamable HTTP, and the Streamable HTTP load path in both eras (a minimal net/http
// client, mcpspec's session and `mcpspec load`, closed and open model). It prints
// markdown tables; see bench/README.md. Run it inside a loopback-only network namespace, as
// mcp-stress is a third-party program:
//
//	unshare --net sh -c 'ip link set lo up && go run ./bench/cmd/loadbench'
//	go run ./bench/cmd/loadbench [-d 10s] [-c 10] [-rounds 3] [-truth-d 30s] [-rate 200] [-bin mcpspec] [-mcp-stress path] [-only versus|truth|http|http-truth] [-http-c 10,100] [-http-rates 200,1000]
package main
