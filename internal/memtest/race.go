//go:build race

package memtest

// race: the race detector's shadow memory grows with every allocation,
// so Resident measures nothing meaningful under it.
const race = true
