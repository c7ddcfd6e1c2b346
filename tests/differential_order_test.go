package tests

import (
	"fmt"
	"path/filepath"
	"testing"
)

// orderQueries run ORDER BY without LIMIT over bounded input on streamsql and SQLite;
// every ORDER BY ends in a unique column (or the rows are distinct), so the order is
// total and the results must match row by row, in order. NULL sorts first ascending and
// last descending in both.
var orderQueries = []struct{ name, sql, sqlite string }{
	{"by a nullable column", "SELECT id AS id, a AS a FROM t WHERE id < 4000 ORDER BY a, id", ""},
	{"descending", "SELECT id AS id, a AS a FROM t WHERE id < 4000 ORDER BY a DESC, id", ""},
	{"three keys", "SELECT id AS id, grp AS g, b AS b FROM t WHERE id < 4000 ORDER BY grp DESC, b, id", ""},
	{"strings", "SELECT id AS id, s AS s FROM t WHERE id < 4000 ORDER BY s, id DESC", ""},
	{"hidden expression", "SELECT id AS id, a AS a FROM t WHERE id < 4000 ORDER BY a % 7 DESC, id", ""},
	{"every row", "SELECT id AS id, c AS c FROM t ORDER BY c DESC, id", ""},
	{"over an updating aggregate", "SELECT grp AS g, COUNT(*) AS n, SUM(a) AS s FROM t GROUP BY grp ORDER BY n DESC, g", ""},
	{"by an aggregate not selected", "SELECT grp AS g FROM t GROUP BY grp ORDER BY SUM(c), g", ""},
	{"over a filtered aggregate", "SELECT a % 50 AS m, COUNT(*) AS n FROM t WHERE a IS NOT NULL GROUP BY a % 50 HAVING COUNT(*) > 10 ORDER BY n, m DESC", ""},
	{"union all", "SELECT id AS id, a AS a FROM t WHERE a < 50 UNION ALL SELECT id, a FROM t WHERE a > 950 ORDER BY a, id", ""},
	{"distinct", "SELECT DISTINCT grp AS g FROM t ORDER BY g DESC", ""},
	{"values", "SELECT x AS x, y AS y FROM (VALUES (3, 'c'), (1, 'a'), (2, CAST(NULL AS STRING)), (1, 'b')) AS v (x, y) ORDER BY x DESC, y",
		"SELECT column1 AS x, column2 AS y FROM (VALUES (3, 'c'), (1, 'a'), (2, NULL), (1, 'b')) ORDER BY x DESC, y"},
}

// TestDifferentialOrderBy compares ORDER BY over bounded input with SQLite, in order, at
// parallelism 1 and 2 (where the rows of two tasks meet in the one sorting task).
func TestDifferentialOrderBy(t *testing.T) {
	t.Parallel() // in-process and independent: it shares the two cores with the other differential tests
	path := filepath.Join(t.TempDir(), "t.json")
	rows := generateRows(20_000)
	if err := writeJSONLines(path, rows); err != nil {
		t.Fatal(err)
	}
	db := loadSQLite(t, rows)
	defer db.Close()
	for _, q := range orderQueries {
		want := sqliteRows(t, db, orDefault(q.sqlite, q.sql))
		for _, parallelism := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, parallelism %d", q.name, parallelism), func(t *testing.T) {
				got := streamsqlRows(t, path, fmt.Sprintf("SET 'parallelism.default' = '%d';\n%s", parallelism, q.sql))
				if len(got) != len(want) {
					t.Fatalf("got %d rows, want %d", len(got), len(want))
				}
				for i := range want {
					if !rowsEqual(got[i], want[i]) {
						t.Fatalf("row %d differs:\ngot  %v\nwant %v", i, got[i], want[i])
					}
				}
				if len(want) < 2 {
					t.Fatalf("the query orders %d rows", len(want))
				}
			})
		}
	}
}
