package tests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// The lookup join against a real PostgreSQL server (the throwaway one pgtest starts):
// customers 1..100 looked up for orders of customers 1..120.

// customers has no index: each query is one sequential scan, which PostgreSQL counts
// (an index scan of `= ANY(...)` counts once per key).
const (
	lookupCustomers = `CREATE TABLE customers (id bigint NOT NULL, name text NOT NULL, region text);
INSERT INTO customers SELECT i, 'c' || i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END FROM generate_series(1, 100) AS i`
	lookupOut  = `CREATE TABLE out (id bigint PRIMARY KEY, cid bigint, name text)`
	lookupBoth = lookupCustomers + ";\n" + lookupOut
)

// lookupScript joins rows orders (paced at rate rows a second, unpaced when 0) with
// the customers of lookupURL and upserts the pairs into out through sinkURL.
func lookupScript(sinkURL, lookupURL string, rows, rate int, lookupOptions, settings string) string {
	pace := ""
	if rate > 0 {
		pace = fmt.Sprintf("'rows-per-second' = '%d', ", rate)
	}
	return fmt.Sprintf(`%s
CREATE TABLE orders (id BIGINT, cid BIGINT, p AS PROCTIME()) WITH (
  'connector' = 'datagen', 'number-of-rows' = '%d', %s'seed' = '5',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d',
  'fields.cid.min' = '1', 'fields.cid.max' = '120');
CREATE TABLE customers (id BIGINT, name STRING, region STRING) WITH (
  'connector' = 'jdbc', 'url' = '%s', 'table-name' = 'customers'%s);
CREATE TABLE pg_out (id BIGINT, cid BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'postgres', 'url' = '%s', 'table-name' = 'out', 'sink.buffer-flush.interval' = '100 ms');
INSERT INTO pg_out SELECT o.id, o.cid, c.name FROM orders AS o
LEFT JOIN customers FOR SYSTEM_TIME AS OF o.p AS c ON o.cid = c.id;
`, settings, rows, pace, rows, lookupURL, lookupOptions, sinkURL)
}

// checkJoined fails the test unless out holds the rows 1..rows, each with the name of
// its customer, NULL for the customers PostgreSQL lacks.
func checkJoined(t *testing.T, conn *pgx.Conn, rows int) {
	t.Helper()
	got := pgRows(t, conn, `SELECT count(*), count(*) FILTER (WHERE cid <= 100 AND name = 'c' || cid OR cid > 100 AND name IS NULL) FROM out`)
	if want := fmt.Sprintf("%d|%d", rows, rows); got[0] != want {
		t.Errorf("out holds %s rows|rightly joined rows, want %s", got[0], want)
	}
}

// tableScans is how many sequential scans PostgreSQL counted on customers: one per
// query.
// Statistics reach the view when the job's connection closes; it waits for them to
// settle.
func tableScans(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	last, stable := int64(-1), 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var n int64
		if _, err := conn.Exec(context.Background(), "SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(context.Background(),
			`SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'customers'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == last && n > 0 {
			if stable++; stable >= 3 {
				return n
			}
		} else {
			stable = 0
		}
		last = n
	}
	t.Fatalf("the scans of customers did not settle (last %d)", last)
	return 0
}

// TestPostgresLookupJoin: 20000 rows of 120 customers looked up in PostgreSQL. Without
// a cache each batch of about a thousand rows is one query for its distinct keys (not a
// query per row or per key); with a PARTIAL cache of the 120 keys (missing ones
// included), nearly all are answered from memory. Both join every row rightly.
func TestPostgresLookupJoin(t *testing.T) {
	const rows = 20000
	var scans [2]int64
	for i, options := range []string{"", ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1000'"} {
		u, conn := pgDB(t, lookupBoth)
		stderr, code := runScript(t, lookupScript(u, u, rows, 0, options, ""))
		if code != 0 {
			t.Fatalf("the job failed:\n%s", stderr)
		}
		checkJoined(t, conn, rows)
		scans[i] = tableScans(t, conn)
	}
	t.Logf("queries on customers: %d without a cache, %d with one", scans[0], scans[1])
	// 20000 rows come in batches of about 1024: some 20 queries, far below the 120 keys.
	if scans[0] < 10 || scans[0] > 60 {
		t.Errorf("without a cache, %d queries for %d rows: want one per batch", scans[0], rows)
	}
	if scans[1] > 3 {
		t.Errorf("with a cache of every key, %d queries: want the first batches' only", scans[1])
	}
}

// TestPostgresLookupJoinServerRestart: the lookup's server, a private one, is really
// restarted in the middle of a paced job: a fast shutdown, which closes the job's
// connections, then two seconds down refusing new ones, then a start on the same port
// and data. With enough retries the lookups wait it out and the job goes on joining rows
// once it is back; with none, the job fails, restarts by its strategy from its latest
// checkpoint, and ends with the same table. The sink writes to the shared server.
func TestPostgresLookupJoinServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a paced job for some seconds")
	}
	const rows = 5000
	cases := []struct {
		name, options, settings string
		restarts                bool
	}{
		{"retries", ", 'lookup.max-retries' = '20'", "", false},
		{"restart", ", 'lookup.max-retries' = '0'", `SET 'execution.checkpointing.interval' = '200 ms';
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '100';
SET 'restart-strategy.fixed-delay.delay' = '200 ms';`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink, conn := pgDB(t, lookupOut)
			server := pgtest.NewPrivate(t)
			lookup := server.URL()
			if err := pgExec(lookup, lookupCustomers); err != nil {
				t.Fatal(err)
			}
			script := writeScript(t, lookupScript(sink, lookup, rows, 1000, c.options, c.settings))
			cmd := streamsqlCmd("-f", script, "--state-dir", t.TempDir(), "--format", "csv")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }() // the test waits for it below
			// Down from the second second of rows to the fourth.
			time.Sleep(2 * time.Second)
			before := count(t, conn)
			server.Stop(t)
			time.Sleep(2 * time.Second)
			during := count(t, conn)
			server.Start(t)
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("the job did not end:\n%s", stderr.String())
			}
			if err != nil {
				t.Fatalf("the job failed: %v\n%s", err, stderr.String())
			}
			if before == 0 || during >= rows {
				t.Errorf("%d rows joined before the server went down, %d while it was: the restart did not fall mid-job", before, during)
			}
			checkJoined(t, conn, rows)
			restarted := strings.Contains(stderr.String(), "restart 1 in")
			if restarted != c.restarts {
				t.Errorf("restarted: %v, want %v; stderr:\n%s", restarted, c.restarts, stderr.String())
			}
		})
	}
}

func count(t *testing.T, conn *pgx.Conn) int {
	n, _ := strconv.Atoi(pgRows(t, conn, "SELECT count(*) FROM out")[0])
	return n
}

// pgExec runs sql on a connection of its own to url.
func pgExec(url, sql string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
