//go:build race

package resources_test

// raceEnabled: the race detector keeps shadow memory for every byte a program touches, so a
// helper's RSS grows by more than it allocates.
const raceEnabled = true
