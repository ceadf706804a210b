// Package result holds the plain data every producer (runner, load generator, probes) fills and
// every reporter reads. It has no behaviour beyond small helpers; it imports nothing of mcpspec.
package result
