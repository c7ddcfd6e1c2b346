package tests

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// version is a change of the versioned table rates(k, rate, rts): a new rate of key k
// from time ts on, or (deleted) the end of k's rates at ts; seq is its arrival order.
type version struct {
	k        string
	rate, ts int64
	deleted  bool
	seq      int
}

// temporalQueries run as temporal joins on streamsql and, on SQLite, as joins with the
// version a correlated subquery picks for each order: the latest at or before the
// order's time (the later arrival among equal times), unless it is a deletion.
var temporalQueries = []struct{ name, sql, sqlite string }{
	{"inner",
		"SELECT o.k AS k, o.v AS v, o.ts AS ts, r.rate AS rate FROM e AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k",
		"SELECT o.k, o.v, " + tsText("o.ts") + " AS ts, r.rate FROM events o JOIN rates r ON " + validVersion},
	{"left",
		"SELECT o.k AS k, o.v AS v, o.ts AS ts, r.rate AS rate FROM e AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.k = r.k",
		"SELECT o.k, o.v, " + tsText("o.ts") + " AS ts, r.rate FROM events o LEFT JOIN rates r ON " + validVersion},
	{"left with a condition on the version",
		"SELECT o.k AS k, o.v AS v, o.ts AS ts, r.rate AS rate, r.rts AS rts FROM e AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON r.k = o.k AND o.v > r.rate",
		"SELECT o.k, o.v, " + tsText("o.ts") + " AS ts, r.rate, " + tsText("r.ts") + " AS rts FROM events o LEFT JOIN rates r ON " + validVersion + " AND o.v > r.rate"},
}

const validVersion = `r.k = o.k AND r.deleted = 0 AND r.seq = (SELECT r2.seq FROM rates r2 WHERE r2.k = o.k AND r2.ts <= o.ts ORDER BY r2.ts DESC, r2.seq DESC LIMIT 1)`

// TestDifferentialTemporal compares event-time temporal joins with SQLite over 20k
// orders and 4k changes of the versioned table (updates and deletes, as debezium-json),
// both shuffled within the watermarks' 2 s delay so that none is late, at parallelism 1
// and 2.
func TestDifferentialTemporal(t *testing.T) {
	t.Parallel() // in-process and independent
	r := rand.New(rand.NewPCG(13, 17))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	orders := make([]event, sizedTemporal(20_000))
	for i := range orders {
		orders[i] = event{fmt.Sprint("k", r.IntN(60)), r.Int64N(100), base + int64(i)*20 - r.Int64N(1500)}
	}
	var versions []version
	live := map[string]bool{}
	for i := range sizedTemporal(4_000) {
		k := fmt.Sprint("k", r.IntN(50)) // keys 50 to 59 have no rate
		v := version{k: k, rate: r.Int64N(100), ts: base - 1000 + int64(i)*100 - r.Int64N(1500), seq: i}
		if live[k] && r.IntN(8) == 0 {
			v.deleted = true
		}
		live[k] = !v.deleted
		versions = append(versions, v)
	}
	ordersPath, db := loadEvents(t, orders)
	ratesPath := loadVersions(t, db, versions)
	for _, q := range temporalQueries {
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				want := sqliteRows(t, db, q.sqlite)
				if len(want) < len(orders)/2 {
					t.Fatalf("the oracle returned %d rows, want most orders", len(want))
				}
				ddl := fmt.Sprintf(`SET 'parallelism.default' = '%d';
					CREATE TABLE e (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
					WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
					CREATE TABLE rates (k STRING, rate BIGINT, rts TIMESTAMP(3), WATERMARK FOR rts AS rts - INTERVAL '2' SECOND,
					  PRIMARY KEY (k) NOT ENFORCED)
					WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');`, parallelism, ordersPath, ratesPath)
				compareRows(t, runOnTime(t, ddl, q.sql), want)
			})
		}
	}
}

// loadVersions writes the changes as debezium-json, in order (a key's first rate is
// created, later ones update it, a deletion's before image carries its time), and into
// the table rates(k, rate, ts, deleted, seq) of db.
func loadVersions(t *testing.T, db *sql.DB, versions []version) string {
	t.Helper()
	row := func(v version) string {
		return fmt.Sprintf(`{"k":%q,"rate":%d,"rts":%q}`, v.k, v.rate, time.UnixMilli(v.ts).UTC().Format("2006-01-02 15:04:05.000"))
	}
	var lines bytes.Buffer
	last := map[string]version{}
	for _, v := range versions {
		prev, live := last[v.k]
		switch {
		case v.deleted:
			fmt.Fprintf(&lines, `{"before":%s,"after":null,"op":"d"}`+"\n", row(v))
		case live:
			fmt.Fprintf(&lines, `{"before":%s,"after":%s,"op":"u"}`+"\n", row(prev), row(v))
		default:
			fmt.Fprintf(&lines, `{"before":null,"after":%s,"op":"c"}`+"\n", row(v))
		}
		if v.deleted {
			delete(last, v.k)
		} else {
			last[v.k] = v
		}
	}
	path := filepath.Join(t.TempDir(), "rates.debezium")
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE rates (k TEXT, rate INTEGER, ts INTEGER, deleted INTEGER, seq INTEGER); CREATE INDEX rates_k ON rates (k, ts)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		deleted := 0
		if v.deleted {
			deleted = 1
		}
		if _, err := tx.Exec("INSERT INTO rates VALUES (?, ?, ?, ?, ?)", v.k, v.rate, v.ts, deleted, v.seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sizedTemporal is sized for the temporal join's oracle, whose correlated subquery is
// quadratic: under the race detector a tenth of the rows.
func sizedTemporal(n int) int {
	if underRace {
		return n / 10
	}
	return n
}
