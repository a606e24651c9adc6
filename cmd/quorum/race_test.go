//go:build race

package main

// raceFlags are the build flags that make a binary share the compiled
// packages of this test binary: with the race detector, as it was built.
var raceFlags = []string{"-race"}
