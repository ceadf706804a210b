// Package replay sends the client's side of a recording to a server again and compares each
// answer with the recorded one.
//
// [Run] sends every request and notification the client sent, in order and with the ids as
// recorded (the handshake included), waiting for each request's answer before the next; a
// request the server makes meanwhile (sampling, roots, elicitation) is answered with what the
// client answered in the recording. Each answer is compared with the recorded one by request
// id, as JSON values: [Matched], [Changed] (with the JSON paths that differ), [Added] (an
// answer where the recording has none) or [Removed] (a recorded answer that did not come).
// Paths named in [Options.Ignore] are left out of the comparison.
package replay
