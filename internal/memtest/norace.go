//go:build !race

package memtest

const race = false
