// Package pipe is an in-memory frame transport for tests and benchmarks.
//
// [New] returns the two ends of one connection: a client end that implements
// [transport.Conn] (hand it to the session) and a [ServerEnd] a test drives frame by frame, so a
// fake server can be scripted precisely: answer out of order, send a wrong id, a frame with both
// result and error, a framing fault, or die with a [transport.ExitError].
//
// Frames travel through buffered channels; nothing is serialized or framed. Each direction keeps
// its order.
package pipe
