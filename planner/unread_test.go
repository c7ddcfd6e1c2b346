package planner

import (
	"slices"
	"strings"
	"testing"
)

// ScanReads follows projections, filters and the watermark down to the scan, fields of
// ROW columns included, and counts every computed expression and every column past
// another operator as read.
func TestScanReads(t *testing.T) {
	const ddl = `CREATE TABLE e (event_type INT, bid ROW<auction BIGINT, price BIGINT, extra STRING, dt TIMESTAMP(3)>,
		person ROW<id BIGINT, name STRING>, ts AS bid.dt, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');`
	for _, c := range []struct{ sql, want string }{
		{"SELECT bid.price FROM e WHERE event_type = 2", "[person bid.auction bid.extra]"},
		{"SELECT bid FROM e", "[event_type person]"},
		{"SELECT event_type FROM e", "[person bid.auction bid.price bid.extra]"},
		// y is not used, but computing it may fail.
		{"SELECT x FROM (SELECT bid.price AS x, CAST(person.name AS INT) AS y FROM e)", "[bid.auction bid.extra event_type person.id]"},
		{"SELECT bid.auction, COUNT(*) FROM e GROUP BY bid.auction", "[event_type person bid.price bid.extra]"},
		{"SELECT window_end, MAX(bid.price) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
			"[event_type person bid.auction bid.extra]"},
		// A join reads the whole of the columns it is given.
		{"SELECT a.bid.price, b.person.id FROM e AS a JOIN e AS b ON a.bid.auction = b.person.id", "[event_type]"},
	} {
		table, n, err := planOver(t, ddl, c.sql)
		if err != nil {
			t.Fatal(err)
		}
		var merged Reads
		for _, reads := range ScanReads(n) {
			if merged == nil {
				merged = make(Reads, len(reads))
			}
			for i := range reads {
				merged[i].Add(reads[i])
			}
		}
		got := merged.Unread(table.SourceSchema())
		slices.Sort(got)
		want := strings.Fields(c.want[1 : len(c.want)-1])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s\nleaves unread %v, want %v", c.sql, got, want)
		}
	}
}
