//go:build race

package host

// raceEnabled: the race detector makes sync.Pool drop what it is given at
// random, so allocation counts say nothing under it.
const raceEnabled = true
