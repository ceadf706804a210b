// Package localguard is the one home of two checks the local front ends (mcpspec mcp, mcpspec
// ui, the recording proxy) share: which server SPECs they may start ([LoadServers]), and
// whether an HTTP request is a loopback one from our own client ([Loopback], [LoopbackHost],
// [LoopbackOrigin]).
package localguard
