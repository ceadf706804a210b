//go:build !unix

package main

import (
	"fmt"
	"os"
)

// main explains that the harness needs unix process handling.
func main() {
	fmt.Fprintln(os.Stderr, "loadbench: runs on unix only")
	os.Exit(2)
}
