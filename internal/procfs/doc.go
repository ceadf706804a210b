// Package procfs lists processes from Linux's /proc: what the stdio transport and the CLI need
// to find the whole process tree of a server and every process reparented to mcpspec. It is
// empty on other systems.
package procfs
