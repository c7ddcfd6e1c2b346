//go:build !race

package tests

// underRace says whether the race detector is on (see race_on_test.go).
const underRace = false
