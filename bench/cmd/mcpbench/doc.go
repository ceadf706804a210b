// Command mcpbench measures mcpspec's session layer against the official go-sdk client and a
// hand-rolled raw client, all calling the reference server (`mcpspec testserver`) run as a
// child process, and prints the figures as markdown tables. See bench/README.md.
//
//	go run ./bench/cmd/mcpbench [-n 20000] [-duration 3s] [-c 32] [-inflight-stdio 1000] [-inflight-http 10000] [-bin path]
package main
