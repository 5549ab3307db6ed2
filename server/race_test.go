//go:build race

package server_test

// raceEnabled is true when the tests run under the race detector, which
// makes the engine's work many times slower.
const raceEnabled = true
