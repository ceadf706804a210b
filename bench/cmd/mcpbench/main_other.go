//go:build !unix

package main

import (
	"fmt"
	"os"
)

// main explains that the harness measures process CPU with getrusage, which only unix has.
func main() {
	fmt.Fprintln(os.Stderr, "mcpbench: runs on unix only (it measures client CPU with getrusage)")
	os.Exit(2)
}
