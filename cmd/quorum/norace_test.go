//go:build !race

package main

// raceFlags are the build flags that make a binary share the compiled
// packages of this test binary: none, as it was built without the race
// detector.
var raceFlags []string
