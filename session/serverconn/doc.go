// Package serverconn opens sessions to one server under test. It is the one way the runner,
// the load engine and the detectors reach a server: it dials (spawning a child process or
// connecting a socket), performs the handshake, names where each child's stderr goes, pins
// the protocol version the first session negotiated for every later one, and describes a
// failure as an [*Error] carrying its fault category and a hint (read with hint.Of).
//
// An [Opener] opens independent sessions (a load test's fresh session per iteration, a
// fuzzer's respawn after a crash); a [Pool] keeps up to N of them for reuse and remembers a
// failure to connect, so a server that cannot start is started once, not once per test.
package serverconn
