//go:build !linux

package cli

// becomeSubreaper does nothing: only Linux has child subreapers. See the README for what each
// system guarantees about a server's descendants.
func becomeSubreaper() {}

// killOrphans does nothing: without a subreaper, orphans are not ours.
func killOrphans() {}
