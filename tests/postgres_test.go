package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// The PostgreSQL tests run the real command against a real server (package pgtest
// starts a throwaway one, or uses STREAMSQL_TEST_PG_URL). cli_test.go's TestMain is not
// pgtest.Main: the throwaway server stops, and its directory goes, when the test
// process exits.

// pgJob writes a paced, seeded datagen source through the sink table sink into the
// PostgreSQL table out: 30000 rows at 5000 a second, so a run lasts six seconds,
// checkpointed every 100 ms. statements end the script (the INSERT).
func pgJob(url, sink, outColumns, outOptions, statements string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE gen (id BIGINT, k BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '30000', 'rows-per-second' = '5000', 'seed' = '7',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '300', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE %s (%s) WITH (
  'connector' = 'postgres', 'url' = '%s', 'table-name' = 'out'%s);
%s;
`, sink, outColumns, url, outOptions, statements)
}

// pgDB is a fresh database with the target table created.
func pgDB(t *testing.T, ddl string) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(context.Background(), ddl); err != nil {
		t.Fatal(err)
	}
	return url, conn
}

// pgRows returns the rows of query as "a|b|c" strings, sorted.
func pgRows(t *testing.T, conn *pgx.Conn, query string) []string {
	t.Helper()
	rows, err := queryRows(conn, query)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func queryRows(conn *pgx.Conn, query string) ([]string, error) {
	rs, err := conn.Query(context.Background(), query)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	slices.Sort(out)
	return out, rs.Err()
}

// compareTables fails the test unless got and want hold the same rows (a multiset:
// both sorted), naming the first differences.
func compareTables(t *testing.T, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("%d rows after crashes, %d in the failure-free run", len(got), len(want))
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < 10; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("row %d: got %q, want %q", i, g, w)
			shown++
		}
	}
}

// pgCrashTest runs a job into a failure-free database and into one where a real
// streamsql process is SIGKILLed 12 times, compares the two tables' content, and
// returns a connection to the second.
func pgCrashTest(t *testing.T, ddl, columns, options, insert, query string, seed uint64) (crashed *pgx.Conn) {
	wantURL, wantConn := pgDB(t, ddl)
	runUntilDone(t, writeScript(t, pgJob(wantURL, "pg_sink", columns, options, insert)), t.TempDir(), 0, nil)
	want := pgRows(t, wantConn, query)
	if len(want) == 0 {
		t.Fatal("the failure-free run wrote nothing")
	}
	gotURL, gotConn := pgDB(t, ddl)
	runUntilDone(t, writeScript(t, pgJob(gotURL, "pg_sink", columns, options, insert)), t.TempDir(), 12, rand.New(rand.NewPCG(seed, 11)))
	compareTables(t, pgRows(t, gotConn, query), want)
	return gotConn
}

// TestPostgresCrashUpsertAtLeastOnce: an aggregate upserted by key, at least once;
// replays rewrite the same rows, so after 12 crashes the table equals a failure-free
// run's, key for key.
func TestPostgresCrashUpsertAtLeastOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	pgCrashTest(t, "CREATE TABLE out (k bigint PRIMARY KEY, c bigint NOT NULL, s bigint)",
		"k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED", ", 'sink.buffer-flush.max-rows' = '100'",
		"INSERT INTO pg_sink SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k", "SELECT k, c, s FROM out", 1)
}

// TestPostgresCrashUpsertExactlyOnce: the same through exactly-once commits, from two
// sink tasks.
func TestPostgresCrashUpsertExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	conn := pgCrashTest(t, "CREATE TABLE out (k bigint PRIMARY KEY, c bigint NOT NULL, s bigint)",
		"k BIGINT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED", ", 'sink.delivery-guarantee' = 'exactly-once', 'sink.buffer-flush.max-rows' = '100'",
		"SET 'parallelism.default' = '2';\nINSERT INTO pg_sink SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k", "SELECT k, c, s FROM out", 2)
	if n := pgRows(t, conn, "SELECT count(*) FROM streamsql_commits WHERE checkpoint_id > 0"); len(n) != 1 || n[0] != "2" {
		t.Errorf("sink tasks with commits recorded: %v, want 2", n)
	}
}

// TestPostgresCrashAppendExactlyOnce: unique rows appended exactly once. While the job
// is killed and restarted, a reader samples the table: a sample never holds a row
// twice, nor a row the final table lacks (rows of an epoch rolled back).
func TestPostgresCrashAppendExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	const ddl = "CREATE TABLE out (id bigint NOT NULL, v bigint)"
	const query = "SELECT id, v FROM out"
	columns := "id BIGINT, v BIGINT"
	options := ", 'sink.delivery-guarantee' = 'exactly-once', 'sink.buffer-flush.max-rows' = '100'"
	insert := "INSERT INTO pg_append SELECT id, v FROM gen"

	wantURL, wantConn := pgDB(t, ddl)
	runUntilDone(t, writeScript(t, pgJob(wantURL, "pg_append", columns, options, insert)), t.TempDir(), 0, nil)
	want := pgRows(t, wantConn, query)
	if len(want) != 30000 {
		t.Fatalf("the failure-free run wrote %d rows, want 30000", len(want))
	}

	gotURL, gotConn := pgDB(t, ddl)
	sampler, err := pgx.Connect(context.Background(), gotURL)
	if err != nil {
		t.Fatal(err)
	}
	defer sampler.Close(context.Background())
	stop := make(chan struct{})
	var samples [][]string
	var sampleErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by the test, which waits for it before checking
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			rows, err := queryRows(sampler, query)
			if err != nil {
				sampleErr = err
				return
			}
			samples = append(samples, rows)
		}
	}()
	runUntilDone(t, writeScript(t, pgJob(gotURL, "pg_append", columns, options, insert)), t.TempDir(), 12, rand.New(rand.NewPCG(3, 11)))
	close(stop)
	wg.Wait()
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	got := pgRows(t, gotConn, query)
	compareTables(t, got, want)

	final := make(map[string]bool, len(got))
	for _, r := range got {
		final[r] = true
	}
	growing := 0
	for i, s := range samples {
		if i > 0 && len(s) > len(samples[i-1]) {
			growing++
		}
		ids := map[string]bool{}
		for _, r := range s {
			id := strings.SplitN(r, "|", 2)[0]
			if ids[id] {
				t.Fatalf("sample %d holds id %s twice", i, id)
			}
			ids[id] = true
			if !final[r] {
				t.Fatalf("sample %d holds row %s, which the final table lacks", i, r)
			}
		}
		if i > 0 && len(s) < len(samples[i-1]) {
			t.Fatalf("sample %d has %d rows, fewer than the %d before it", i, len(s), len(samples[i-1]))
		}
	}
	if growing < 5 {
		t.Errorf("the table grew in only %d of %d samples: the samples did not watch the job", growing, len(samples))
	}
}

// TestPostgresNotNullViolation: a row the target rejects fails `streamsql -f` with a
// non-zero exit and a message naming the sink table, the row and the database error.
func TestPostgresNotNullViolation(t *testing.T) {
	url, conn := pgDB(t, "CREATE TABLE out (id bigint PRIMARY KEY, v bigint NOT NULL)")
	script := fmt.Sprintf(`
CREATE TABLE gen (id BIGINT, v BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '100', 'seed' = '1',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100',
  'fields.v.null-rate' = '0.5');
CREATE TABLE pg_bad (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc', 'url' = '%s', 'table-name' = 'out');
INSERT INTO pg_bad SELECT id, v FROM gen;
`, url)
	stderr, code := runScript(t, script)
	if code == 0 {
		t.Fatalf("the job succeeded; stderr:\n%s", stderr)
	}
	for _, want := range []string{"table pg_bad:", "PostgreSQL table out rejected row", "v=null", `null value in column "v"`, "SQLSTATE 23502"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if rows := pgRows(t, conn, "SELECT count(*) FROM out WHERE v IS NULL"); rows[0] != "0" {
		t.Errorf("NULLs written: %v", rows)
	}
}
