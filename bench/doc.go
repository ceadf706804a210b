// Package bench measures mcpspec's session layer against the official go-sdk client and
// against a hand-rolled raw client, all calling the same reference server (mcptest, run as
// `mcpspec testserver` in a child process so the measuring process holds only the client).
//
// It provides the pieces the benchmarks in this package and the mcpbench harness
// (bench/cmd/mcpbench) share: the three clients behind one [Client] interface, a bounded load
// loop that separates the client's CPU and allocations from the server's ([Run]), client CPU
// over an in-memory pipe against a fake server whose own CPU is measured apart ([InMemory]),
// and memory per in-flight call ([Inflight]). bench/README.md has the commands and figures.
//
// The package targets Linux (it reads getrusage and the thread CPU clock); everything it starts
// listens on 127.0.0.1 only, and every loop is bounded in count and time.
package bench
