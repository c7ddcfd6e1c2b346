package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/streamsql/streamsql/internal/pgtest"
)

// groupingQueries run on streamsql, at parallelism 1 and 2, and on PostgreSQL, which has
// GROUPING SETS, ROLLUP and CUBE (SQLite has none), over the same rows. pg is set where
// the dialects differ: PostgreSQL spells Flink's GROUPING_ID(a, b) as GROUPING(a, b).
var groupingQueries = []struct{ name, sql, pg string }{
	{"grouping sets", "SELECT grp AS g, a % 3 AS m, COUNT(*) AS n, SUM(a) AS s, MIN(s) AS mn, MAX(b) AS mx FROM t " +
		"GROUP BY GROUPING SETS ((grp, a % 3), (grp), ())", ""},
	{"rollup with grouping id", "SELECT grp AS g, a % 5 AS m, GROUPING(grp) AS gg, GROUPING_ID(grp, a % 5) AS gid, COUNT(a) AS n, AVG(b) AS av FROM t " +
		"GROUP BY ROLLUP (grp, a % 5)",
		"SELECT grp AS g, a % 5 AS m, GROUPING(grp) AS gg, GROUPING(grp, a % 5) AS gid, COUNT(a) AS n, AVG(b) AS av FROM t " +
			"GROUP BY ROLLUP (grp, a % 5)"},
	{"cube with distinct", "SELECT grp AS g, c % 4 AS m, COUNT(DISTINCT a % 10) AS d, SUM(c) AS s FROM t GROUP BY CUBE (grp, c % 4)", ""},
	{"plain key and rollup", "SELECT grp AS g, a % 3 AS m, c % 2 AS p, COUNT(*) AS n FROM t GROUP BY grp, ROLLUP (a % 3, c % 2)", ""},
	{"composite rollup element", "SELECT grp AS g, a % 2 AS m, c % 3 AS p, COUNT(*) AS n FROM t GROUP BY ROLLUP ((grp, a % 2), c % 3)", ""},
	{"having on grouping", "SELECT grp AS g, SUM(a) AS s FROM t GROUP BY GROUPING SETS ((grp), ()) HAVING GROUPING(grp) = 1 OR SUM(a) > 420000", ""},
	{"aggregate filter", "SELECT grp AS g, COUNT(*) FILTER (WHERE a > 500) AS n, MAX(s) FILTER (WHERE b < 0.5) AS mx FROM t GROUP BY ROLLUP (grp)", ""},
	{"over updates", "SELECT m AS m, COUNT(*) AS groups, SUM(n) AS rows_, MAX(n) AS top FROM " +
		"(SELECT grp, a % 10 AS m, COUNT(*) AS n FROM t GROUP BY grp, a % 10) AS x GROUP BY GROUPING SETS ((m), ())", ""},
	{"duplicate sets", "SELECT grp AS g, COUNT(*) AS n FROM t GROUP BY GROUPING SETS ((grp), (grp), ())", ""},
}

func TestDifferentialGroupingSetsPostgres(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows := generateRows(20_000)
	path := filepath.Join(t.TempDir(), "t.json")
	if err := writeJSONLines(path, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id BIGINT, grp TEXT, a BIGINT, b DOUBLE PRECISION, c BIGINT, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	copyRows := make([][]any, len(rows))
	for i, x := range rows {
		copyRows[i] = []any{x.id, x.grp, x.a, x.b, x.c, x.s}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "grp", "a", "b", "c", "s"}, pgx.CopyFromRows(copyRows)); err != nil {
		t.Fatal(err)
	}
	for _, q := range groupingQueries {
		t.Run(q.name, func(t *testing.T) {
			want := postgresResult(t, conn, orDefault(q.pg, q.sql))
			if len(want) == 0 {
				t.Fatal("the oracle returned no rows: the case tests nothing")
			}
			for _, p := range []int{1, 2} {
				got := streamsqlRows(t, path, fmt.Sprintf("SET 'parallelism.default' = '%d';\n%s", p, q.sql))
				t.Run(fmt.Sprintf("parallelism %d", p), func(t *testing.T) { compareRows(t, got, want) })
			}
		})
	}
}

// postgresResult is query's rows as compareRows reads them: numbers as float64.
func postgresResult(t *testing.T, conn *pgx.Conn, query string) result {
	t.Helper()
	rs, err := conn.Query(context.Background(), query)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer rs.Close()
	var out result
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, f := range rs.FieldDescriptions() {
			switch v := vals[i].(type) {
			case int16:
				m[f.Name] = float64(v)
			case int32:
				m[f.Name] = float64(v)
			case int64:
				m[f.Name] = float64(v)
			case pgtype.Numeric:
				fv, err := v.Float64Value()
				if err != nil {
					t.Fatal(err)
				}
				m[f.Name] = fv.Float64
			default:
				m[f.Name] = v
			}
		}
		out = append(out, m)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return out
}
