package tests

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql"
	_ "modernc.org/sqlite"
)

// differentialQueries run on streamsql and on SQLite over the same rows; every output
// column is aliased so the two results can be matched by name. sqlite is set where the
// dialects spell the query differently.
var differentialQueries = []struct{ name, sql, sqlite string }{
	{"count", "SELECT COUNT(*) AS n FROM t", ""},
	{"count by group", "SELECT grp AS g, COUNT(*) AS n FROM t GROUP BY grp", ""},
	{"int aggregates", "SELECT grp AS g, COUNT(a) AS n, SUM(a) AS s, MIN(a) AS mn, MAX(a) AS mx FROM t GROUP BY grp", ""},
	{"avg double", "SELECT grp AS g, AVG(b) AS av FROM t GROUP BY grp", ""},
	{"avg int", "SELECT grp AS g, AVG(a) AS av FROM t GROUP BY grp", ""},
	{"count distinct", "SELECT grp AS g, COUNT(DISTINCT a) AS n FROM t GROUP BY grp", ""},
	{"group by expression", "SELECT a % 10 AS m, COUNT(*) AS n, SUM(c) AS s FROM t WHERE a IS NOT NULL GROUP BY a % 10", ""},
	{"filter and", "SELECT id AS id, a AS a, b AS b FROM t WHERE a > 500 AND b < 0.5", ""},
	{"filter or null", "SELECT id AS id FROM t WHERE a > 900 OR b IS NULL", ""},
	{"not between", "SELECT id AS id FROM t WHERE NOT (a BETWEEN 100 AND 200)", ""},
	{"in list with null", "SELECT id AS id, grp AS g FROM t WHERE grp IN ('g1', 'g7', NULL)", ""},
	{"not in", "SELECT COUNT(*) AS n FROM t WHERE a NOT IN (1, 2, 3, 4, 5)", ""},
	{"like", "SELECT id AS id, s AS s FROM t WHERE s LIKE 'ab%' OR s LIKE '%zz'", ""},
	{"having", fmt.Sprintf("SELECT grp AS g, SUM(c) AS s FROM t GROUP BY grp HAVING SUM(c) > %d", differentialRows*24_000), ""},
	{"string min max", "SELECT grp AS g, MIN(s) AS mn, MAX(s) AS mx FROM t GROUP BY grp", ""},
	{"coalesce key", "SELECT COALESCE(grp, 'none') AS g, COUNT(*) AS n FROM t GROUP BY COALESCE(grp, 'none')", ""},
	{"case bands", "SELECT CASE WHEN a < 100 THEN 'low' WHEN a < 500 THEN 'mid' ELSE 'high' END AS band, COUNT(*) AS n FROM t GROUP BY CASE WHEN a < 100 THEN 'low' WHEN a < 500 THEN 'mid' ELSE 'high' END", ""},
	{"distinct", "SELECT DISTINCT grp AS g FROM t", ""},
	{"arithmetic in sum", "SELECT grp AS g, SUM(a * 2 + c) AS s FROM t GROUP BY grp", ""},
	{"subquery", "SELECT g AS g, COUNT(*) AS n FROM (SELECT grp AS g, a FROM t WHERE a > 10) AS x GROUP BY g", ""},
	{"aggregate of aggregate", "SELECT cnt AS cnt, COUNT(*) AS n FROM (SELECT grp, COUNT(*) AS cnt FROM t GROUP BY grp) AS x GROUP BY cnt", ""},
	{"min max over updates", "SELECT MIN(cnt) AS mn, MAX(cnt) AS mx, SUM(cnt) AS s FROM (SELECT a, COUNT(*) AS cnt FROM t GROUP BY a) AS x", ""},
	{"string functions", "SELECT id AS id, UPPER(s) AS u, CHAR_LENGTH(s) AS l, SUBSTRING(s, 2, 3) AS sub FROM t WHERE id < 2000",
		"SELECT id AS id, UPPER(s) AS u, LENGTH(s) AS l, SUBSTR(s, 2, 3) AS sub FROM t WHERE id < 2000"},
	{"math functions", "SELECT id AS id, ABS(a - 500) AS d, ROUND(b, 2) AS r FROM t WHERE MOD(id, 100) = 0",
		"SELECT id AS id, ABS(a - 500) AS d, ROUND(b, 2) AS r FROM t WHERE id % 100 = 0"},
	{"filtered group having count", "SELECT grp AS g, COUNT(*) AS n, AVG(b) AS av FROM t WHERE b > 0.3 GROUP BY grp HAVING COUNT(*) > 100", ""},
	{"null-safe count", "SELECT COUNT(b) AS nb, COUNT(grp) AS ng, COUNT(*) AS n FROM t", ""},
	{"with", "WITH big AS (SELECT id, grp, a FROM t WHERE a > 800) SELECT grp AS g, COUNT(*) AS n FROM big GROUP BY grp", ""},
	{"with chained and renamed", "WITH x (k, v) AS (SELECT grp, a FROM t WHERE a IS NOT NULL), y AS (SELECT k, SUM(v) AS total FROM x GROUP BY k) " +
		"SELECT k AS k, total AS total FROM y WHERE total > 100", ""},
	{"union all", "SELECT id AS id, grp AS g FROM t WHERE a < 100 UNION ALL SELECT id, grp FROM t WHERE a > 900 UNION ALL SELECT id, s FROM t WHERE id < 50", ""},
	{"union", "SELECT grp AS g, a % 7 AS m FROM t WHERE a IS NOT NULL UNION SELECT grp, a % 5 FROM t WHERE a IS NOT NULL", ""},
	{"intersect", "SELECT grp AS g, a % 13 AS m FROM t WHERE b < 0.5 INTERSECT SELECT grp, a % 13 FROM t WHERE b > 0.7", ""},
	{"except", "SELECT grp AS g, a % 50 AS m FROM t WHERE id % 2 = 0 EXCEPT SELECT grp, a % 50 FROM t WHERE id % 3 = 0", ""},
	// SQLite has no INTERSECT ALL or EXCEPT ALL: the oracle numbers each value's copies
	// on both sides, so that the plain set operation keeps as many copies as ALL does.
	{"intersect all", "SELECT grp AS g, a % 13 AS m FROM t WHERE b < 0.5 INTERSECT ALL SELECT grp, a % 13 FROM t WHERE b > 0.7",
		"SELECT g, m FROM (SELECT grp AS g, a % 13 AS m, ROW_NUMBER() OVER (PARTITION BY grp, a % 13) AS k FROM t WHERE b < 0.5 " +
			"INTERSECT SELECT grp, a % 13, ROW_NUMBER() OVER (PARTITION BY grp, a % 13) FROM t WHERE b > 0.7)"},
	{"except all", "SELECT grp AS g, a % 50 AS m FROM t WHERE id % 2 = 0 EXCEPT ALL SELECT grp, a % 50 FROM t WHERE id % 3 = 0",
		"SELECT g, m FROM (SELECT grp AS g, a % 50 AS m, ROW_NUMBER() OVER (PARTITION BY grp, a % 50) AS k FROM t WHERE id % 2 = 0 " +
			"EXCEPT SELECT grp, a % 50, ROW_NUMBER() OVER (PARTITION BY grp, a % 50) FROM t WHERE id % 3 = 0)"},
	{"except all of aggregates", "SELECT COUNT(*) % 3 AS m FROM t GROUP BY grp EXCEPT ALL SELECT a % 3 FROM t WHERE id < 10",
		"SELECT m FROM (SELECT m, ROW_NUMBER() OVER (PARTITION BY m) AS k FROM (SELECT COUNT(*) % 3 AS m FROM t GROUP BY grp) " +
			"EXCEPT SELECT a % 3, ROW_NUMBER() OVER (PARTITION BY a % 3) FROM t WHERE id < 10)"},
	{"except of aggregates", "SELECT grp AS g, COUNT(*) % 3 AS m FROM t GROUP BY grp EXCEPT SELECT grp, a % 3 FROM t WHERE id < 10", ""},
	{"union all of types and nulls", fmt.Sprintf("SELECT a AS x, b AS y FROM t WHERE id < 300 UNION ALL SELECT c, NULL FROM t WHERE id > %d", differentialRows-300), ""},
	{"aggregate of a union all", "SELECT g AS g, COUNT(*) AS n, SUM(a) AS s FROM (SELECT grp AS g, a FROM t UNION ALL SELECT s, a FROM t WHERE id < 500) AS u GROUP BY g", ""},
	{"union of an updating input", "SELECT g AS g, n AS n FROM (SELECT grp AS g, COUNT(*) AS n FROM t GROUP BY grp UNION SELECT grp, COUNT(*) FROM t WHERE a > 500 GROUP BY grp) AS u", ""},
	{"values", "SELECT x AS x, y AS y FROM (VALUES (1, 'a'), (2, 'b'), (3, NULL), (1, 'a')) AS v (x, y)",
		"SELECT column1 AS x, column2 AS y FROM (VALUES (1, 'a'), (2, 'b'), (3, NULL), (1, 'a'))"},
	{"union with values", "SELECT grp AS g FROM t UNION SELECT * FROM (VALUES ('zz'), (CAST(NULL AS STRING)), ('g1')) AS v (g)",
		"SELECT grp AS g FROM t UNION VALUES ('zz'), (NULL), ('g1')"},
	{"order by limit", "SELECT id AS id, a AS a FROM t ORDER BY a DESC, id LIMIT 10", ""},
	{"order by hidden expression limit", "SELECT id AS id FROM t WHERE b IS NOT NULL ORDER BY b * 2, id DESC LIMIT 7", ""},
	{"order by aggregate limit", "SELECT grp AS g, SUM(a) AS s FROM t GROUP BY grp ORDER BY COUNT(*) DESC, grp LIMIT 3", ""},
	{"union order by limit", "SELECT id AS id FROM t WHERE a < 10 UNION ALL SELECT id FROM t WHERE a > 990 ORDER BY id DESC LIMIT 5", ""},
	// The variance family: SQLite has none, so the oracle computes it from sums (as
	// Calcite rewrites it); the sample variants are NULL for one value.
	{"variance", "SELECT grp AS g, VAR_POP(a) AS vp, VAR_SAMP(b) AS vs, STDDEV_POP(b) AS sp, STDDEV_SAMP(a) AS ss FROM t GROUP BY grp",
		"SELECT grp AS g, (SUM(a * a) - SUM(a) * SUM(a) * 1.0 / COUNT(a)) / COUNT(a) AS vp, " +
			"CASE WHEN COUNT(b) > 1 THEN (SUM(b * b) - SUM(b) * SUM(b) / COUNT(b)) / (COUNT(b) - 1) END AS vs, " +
			"SQRT((SUM(b * b) - SUM(b) * SUM(b) / COUNT(b)) / COUNT(b)) AS sp, " +
			"SQRT((SUM(a * a) - SUM(a) * SUM(a) * 1.0 / COUNT(a)) / (COUNT(a) - 1)) AS ss FROM t GROUP BY grp"},
	{"variance of few values", "SELECT a % 97 AS m, VAR_SAMP(c) AS vs, VAR_POP(c) AS vp FROM t WHERE a IS NOT NULL AND id < 300 GROUP BY a % 97",
		"SELECT a % 97 AS m, CASE WHEN COUNT(c) > 1 THEN (SUM(c * c) - SUM(c) * SUM(c) * 1.0 / COUNT(c)) / (COUNT(c) - 1) END AS vs, " +
			"(SUM(c * c) - SUM(c) * SUM(c) * 1.0 / COUNT(c)) / COUNT(c) AS vp FROM t WHERE a IS NOT NULL AND id < 300 GROUP BY a % 97"},
	{"variance over updates", "SELECT VAR_POP(n) AS vp, STDDEV_SAMP(n) AS ss FROM (SELECT a, COUNT(*) AS n FROM t GROUP BY a) AS x",
		"SELECT (SUM(n * n) - SUM(n) * SUM(n) * 1.0 / COUNT(n)) / COUNT(n) AS vp, " +
			"SQRT((SUM(n * n) - SUM(n) * SUM(n) * 1.0 / COUNT(n)) / (COUNT(n) - 1)) AS ss FROM (SELECT a, COUNT(*) AS n FROM t GROUP BY a) AS x"},
	{"aggregate filter", "SELECT grp AS g, COUNT(*) FILTER (WHERE a > 500) AS n, SUM(c) FILTER (WHERE b < 0.5) AS s, " +
		"AVG(b) FILTER (WHERE s LIKE 'a%') AS av, MAX(s) FILTER (WHERE a < 100) AS mx, COUNT(DISTINCT a) FILTER (WHERE c > 500000) AS d FROM t GROUP BY grp", ""},
	{"aggregate filter over updates", "SELECT COUNT(*) FILTER (WHERE n > 100) AS big, SUM(n) FILTER (WHERE a < 500) AS low FROM (SELECT a, COUNT(*) AS n FROM t GROUP BY a) AS x", ""},
	{"count distinct pairs", "SELECT grp AS g, COUNT(DISTINCT a % 10, s) AS n FROM t GROUP BY grp",
		"SELECT g AS g, COUNT(*) AS n FROM (SELECT DISTINCT grp AS g, a % 10 AS x, s FROM t WHERE a IS NOT NULL) GROUP BY g"},
	{"listagg", "SELECT grp AS g, LISTAGG(s, '-') AS l, LISTAGG(s) FILTER (WHERE a > 900) AS lf FROM t WHERE id < 3000 GROUP BY grp",
		"SELECT grp AS g, group_concat(s, '-') AS l, group_concat(s, ',') FILTER (WHERE a > 900) AS lf FROM (SELECT * FROM t WHERE id < 3000 ORDER BY id) GROUP BY grp"},
	{"first and last value", "SELECT grp AS g, FIRST_VALUE(a) AS f, LAST_VALUE(s) AS l FROM t GROUP BY grp",
		"SELECT grp AS g, (SELECT a FROM t AS u WHERE u.grp IS t.grp AND a IS NOT NULL ORDER BY id LIMIT 1) AS f, " +
			"(SELECT s FROM t AS u WHERE u.grp IS t.grp ORDER BY id DESC LIMIT 1) AS l FROM t GROUP BY grp"},
	{"json_arrayagg", "SELECT grp AS g, JSON_ARRAYAGG(a) AS j, JSON_ARRAYAGG(a NULL ON NULL) FILTER (WHERE id < 2000) AS jn FROM t WHERE id < 5000 GROUP BY grp",
		"SELECT grp AS g, json_group_array(a) FILTER (WHERE a IS NOT NULL) AS j, json_group_array(a) FILTER (WHERE id < 2000) AS jn FROM (SELECT * FROM t WHERE id < 5000 ORDER BY id) GROUP BY grp"},
	{"with in a subquery", "SELECT g AS g, n AS n FROM (WITH c AS (SELECT grp AS g, COUNT(*) AS n FROM t GROUP BY grp) SELECT g, n FROM c) AS s", ""},
}

var differentialRows = sized(100_000)

func TestDifferentialSQLite(t *testing.T) {
	t.Parallel() // in-process and independent: it shares the two cores with the other differential tests
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	rows := generateRows(differentialRows)
	if err := writeJSONLines(path, rows); err != nil {
		t.Fatal(err)
	}
	db := loadSQLite(t, rows)
	defer db.Close()
	for _, q := range differentialQueries {
		t.Run(q.name, func(t *testing.T) {
			want := sqliteRows(t, db, orDefault(q.sqlite, q.sql))
			got := streamsqlRows(t, path, q.sql)
			compareRows(t, got, want)
		})
	}
}

type row struct {
	id  int64
	grp *string
	a   *int64
	b   *float64
	c   int64
	s   string
}

func generateRows(n int) []row {
	r := rand.New(rand.NewPCG(42, 7))
	out := make([]row, n)
	letters := "abcdefghijklmnopqrstuvwxyz"
	for i := range out {
		x := row{id: int64(i), c: r.Int64N(1_000_000)}
		if r.IntN(20) != 0 {
			g := fmt.Sprintf("g%d", r.IntN(12))
			x.grp = &g
		}
		if r.IntN(10) != 0 {
			a := r.Int64N(1000)
			x.a = &a
		}
		if r.IntN(8) != 0 {
			b := r.Float64()
			x.b = &b
		}
		var sb strings.Builder
		for j := r.IntN(8); j > 0; j-- {
			sb.WriteByte(letters[r.IntN(len(letters))])
		}
		x.s = sb.String()
		out[i] = x
	}
	return out
}

func writeJSONLines(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, x := range rows {
		enc.Encode(map[string]any{"id": x.id, "grp": x.grp, "a": x.a, "b": x.b, "c": x.c, "s": x.s})
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func loadSQLite(t *testing.T, rows []row) *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	for _, stmt := range []string{
		"PRAGMA case_sensitive_like = ON",
		"CREATE TABLE t (id INTEGER, grp TEXT, a INTEGER, b REAL, c INTEGER, s TEXT)",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rows {
		if _, err := ins.Exec(x.id, x.grp, x.a, x.b, x.c, x.s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}

// result is a query's rows, each a map from column name to value (nil, float64 or string).
type result []map[string]any

func sqliteRows(t *testing.T, db *sql.DB, query string) result {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatalf("sqlite: %v", err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out result
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for i, c := range cols {
			switch v := vals[i].(type) {
			case int64:
				m[c] = float64(v)
			case []byte:
				m[c] = string(v)
			default:
				m[c] = v
			}
		}
		out = append(out, m)
	}
	return out
}

func streamsqlRows(t *testing.T, path, query string) result {
	t.Helper()
	var out, errs bytes.Buffer
	s, err := streamsql.NewSession(streamsql.Config{Out: &out, Err: &errs, Format: "json", Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE t (id BIGINT, grp STRING, a BIGINT, b DOUBLE, c BIGINT, s STRING)
		WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');`, path)
	if err := s.Exec(context.Background(), ddl+query+";"); err != nil {
		t.Fatalf("streamsql: %v\n%s", err, errs.String())
	}
	var res result
	dec := json.NewDecoder(&out)
	for dec.More() {
		m := map[string]any{}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("streamsql output: %v", err)
		}
		res = append(res, m)
	}
	return res
}

// compareRows compares two results as multisets, numbers with a relative tolerance.
func compareRows(t *testing.T, got, want result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d\nfirst got: %v\nfirst want: %v", len(got), len(want), head(got), head(want))
	}
	sortResult(got)
	sortResult(want)
	for i := range want {
		if !rowsEqual(got[i], want[i]) {
			t.Fatalf("row %d differs:\ngot  %v\nwant %v", i, got[i], want[i])
		}
	}
}

func head(r result) any {
	if len(r) == 0 {
		return nil
	}
	return r[0]
}

func sortKey(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		switch v := m[k].(type) {
		case float64:
			fmt.Fprintf(&b, "%s=%.6g;", k, v)
		default:
			fmt.Fprintf(&b, "%s=%v;", k, v)
		}
	}
	return b.String()
}

func sortResult(r result) {
	type keyed struct {
		key string
		row map[string]any
	}
	ks := make([]keyed, len(r))
	for i, m := range r {
		ks[i] = keyed{sortKey(m), m}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	for i := range ks {
		r[i] = ks[i].row
	}
}

func rowsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok {
			return false
		}
		af, aok := av.(float64)
		bf, bok := bv.(float64)
		if aok && bok {
			if math.Abs(af-bf) > 1e-9*math.Max(1, math.Max(math.Abs(af), math.Abs(bf))) {
				return false
			}
			continue
		}
		if av != bv {
			return false
		}
	}
	return true
}

// sized is how many rows a differential test generates where it would generate n:
// under the race detector a quarter (at least 1,000), so that they still cover
// every path, with the detector watching, in a fraction of the time. The oracle's
// queries that depend on the count take it from here.
func sized(n int) int {
	if underRace {
		return max(n/4, min(n, 1000))
	}
	return n
}
