// Package pacer decides when the load engine sends: an open-model arrival schedule kept apart
// from whoever sends (the executor), as vegeta keeps its Pacer apart from its Attacker.
//
// A [Pacer] answers two questions about hit n (counting from 0): when it is due
// ([Pacer.Due]), and, vegeta's way, how long to wait from now for it ([Pace]). The due time is
// the request's intended send time: the executor measures latency from it, so a server that
// stalls cannot hide the stall behind requests that were never sent (coordinated omission).
//
// [Constant] is a fixed rate; [Stages] ramps the rate linearly between targets, as k6's
// ramping-arrival-rate executor does. [DueBefore] counts the hits due before a moment in a
// bounded number of questions, however many there are. [Workers] is the closed model's
// schedule: how many workers should be running at a moment, and [Workers.Next] when that next
// changes, so an executor sleeps until then rather than polling.
package pacer
