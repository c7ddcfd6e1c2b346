//go:build race

package tests

// underRace says whether the race detector is on: it slows the in-process tests ten
// to twenty times, and the differential tests then run over fewer rows (see sized).
const underRace = true
