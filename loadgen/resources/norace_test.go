//go:build !race

package resources_test

// raceEnabled: see race_test.go.
const raceEnabled = false
