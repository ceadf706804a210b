// Package clock holds the one cancellable wait the module shares: [Sleep], a timer that a
// context can end early, for pacers, retry back-offs and probes.
package clock
