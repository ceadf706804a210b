//go:build !unix

package main

import "os"

// maxRSS is 0 where the platform does not report a process's peak resident set.
func maxRSS(*os.ProcessState) int64 { return 0 }
