package nexmark

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// The first events of each type, hashed, pin the generator down: a change made for
// speed that changes any field of any of them (ids, times, prices, strings, the fixed
// tables) fails here. Update the digests only for a change of the events themselves,
// made on purpose, and say so in the commit.
func TestEventDigests(t *testing.T) {
	const n = 20000 // events of each type
	want := [3]string{
		Person:  "5ce9cd18ef94f0f40cc05f8b5b5ddfc1fae93dd8c5c8d681dbee0401a9b61e43",
		Auction: "cd09a7fe6e970475de35eca33d69c0587c0b84b18615cb2a25f2f3a6c5e321b8",
		Bid:     "3c12346e86cb7889e7065aabb1d0cc9424a6afef5b1c1213d06d9cb4ce5a03f5",
	}
	g := newGenerator(defaultConfig(t))
	var e event
	var h [3]interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	var counts [3]int
	for k := range h {
		h[k] = sha256.New()
	}
	for id := int64(0); counts[Person] < n || counts[Auction] < n || counts[Bid] < n; id++ {
		g.generate(id, &e)
		if counts[e.kind] == n {
			continue
		}
		counts[e.kind]++
		h[e.kind].Write([]byte(render(&e)))
		h[e.kind].Write([]byte{'\n'})
	}
	for k := range h {
		if got := hex.EncodeToString(h[k].Sum(nil)); got != want[k] {
			t.Errorf("the first %d %s events have digest %s, want %s", n, typeNames[k], got, want[k])
		}
	}
}

// The rows the reader writes into Arrow, hashed: the events table and a plain bid
// table over the first events, so that a faster way of filling the columns cannot
// change what a query reads.
func TestRowDigests(t *testing.T) {
	cases := []struct {
		shape string
		want  string
	}{
		{"events", "b668a4bb85f6087f33ae164e13e2f00b142e09ce4c3b5fc0ea9d163ba0172186"},
		{"bid", "7b1ce1cbf3e01acb8a37a65aeecf696f014be45be384094a582ee2404630f556"},
	}
	for _, c := range cases {
		schema := eventsSchema
		if c.shape == "bid" {
			schema = bidRow
		}
		mem := checkedMem(t)
		r := openTask(t, mem, table(schema, map[string]string{"table": c.shape, "events.num": "20000"}), 0, 1, 1000)
		rows, eof := read(t, r, -1)
		r.Close()
		if !eof {
			t.Fatalf("%s: no end", c.shape)
		}
		h := sha256.New()
		for _, row := range rows {
			h.Write([]byte(row))
			h.Write([]byte{'\n'})
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.want {
			t.Errorf("the %d rows of the %s table have digest %s, want %s", len(rows), c.shape, got, c.want)
		}
	}
}
