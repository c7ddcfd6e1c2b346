package planner

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/parser"
)

// rankPlan binds a query over t(a INT, b STRING, c DOUBLE, ts TIMESTAMP(3)) with a
// watermark on ts, and returns its EXPLAIN text or the error.
func rankPlan(t *testing.T, sql string) string {
	t.Helper()
	script, err := parser.Parse("CREATE TABLE t (a INT, b STRING, c DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');\n" + sql)
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog()
	table, err := BindTable(script.Stmts[0].(*parser.CreateTableStmt))
	if err != nil {
		t.Fatal(err)
	}
	cat.AddTable(table)
	p := &Planner{Catalog: cat}
	for _, st := range script.Stmts[1 : len(script.Stmts)-1] {
		v, err := p.BindView(st.(*parser.CreateViewStmt))
		if err != nil {
			return "error: " + err.Error()
		}
		cat.AddView(v)
	}
	n, err := p.PlanQuery(script.Stmts[len(script.Stmts)-1].(*parser.QueryStmt).Query)
	if err != nil {
		return "error: " + err.Error()
	}
	return Explain(n, func(Node) int { return 1 })
}

// The Top-N pattern folds the enclosing WHERE into a Rank; without the row number
// selected the Rank drops it; deduplication and window Top-N are recognised; the forms
// not supported are errors at the position of what is wrong. Columns count from the
// start of the line after the CREATE TABLE.
func TestRankPlans(t *testing.T) {
	const sub = "(SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c DESC) AS rn FROM t)"
	cases := []struct{ sql, want string }{
		{"SELECT * FROM " + sub + " WHERE rn <= 3",
			"Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[b], orderBy=[c DESC], select=[a, b, c, ts, rn])"},
		// Not selected, the row number is dropped; what else the WHERE says stays a filter.
		{"SELECT a, b FROM " + sub + " WHERE rn < 3 AND a > 1",
			"Project(select=[a, b])\n   changelog=[updating], parallelism=[1], schema=(a INT, b STRING)\n+- Filter(where=[(a > 1)])\n" +
				"      changelog=[updating], parallelism=[1], schema=(a INT, b STRING, c DOUBLE)\n" +
				"   +- Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[b], orderBy=[c DESC], select=[a, b, c])\n" +
				// Only what the projection, the filter and the ranking read is ranked and stored.
				"         changelog=[updating], parallelism=[1], schema=(a INT, b STRING, c DOUBLE)\n" +
				"      +- Project(select=[a, b, c])"},
		{"SELECT * FROM " + sub + " WHERE rn BETWEEN 2 AND 4", "rankRange=[rankStart=2, rankEnd=4]"},
		{"SELECT * FROM " + sub + " WHERE 3 >= rn", "rankRange=[rankStart=1, rankEnd=3]"},
		{"SELECT a, b FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY ts) AS rn FROM t) WHERE rn = 1",
			"Deduplicate(keep=[FirstRow], key=[b], order=[ROWTIME])\n      changelog=[insert-only]"},
		{"SELECT a, b FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY ts DESC) AS rn FROM t) WHERE rn = 1",
			"Deduplicate(keep=[LastRow], key=[b], order=[ROWTIME])\n      changelog=[updating]"},
		// The row number selected, or no event time: a Top-1.
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY ts) AS rn FROM t) WHERE rn = 1", "Rank(strategy=[AppendFastStrategy]"},
		{"SELECT a FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn = 1", "Rank(strategy=[AppendFastStrategy]"},
		{"SELECT * FROM (SELECT b, cnt, ROW_NUMBER() OVER (ORDER BY cnt DESC) AS rn FROM (SELECT b, COUNT(*) AS cnt FROM t GROUP BY b)) WHERE rn <= 2",
			"Rank(strategy=[RetractStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[], orderBy=[cnt DESC], select=[b, cnt, rn])"},
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn FROM " +
			"(SELECT window_start, window_end, b, SUM(c) AS total FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, b)) WHERE rn <= 2",
			"WindowRank(window=[TUMBLE], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=2], partitionBy=[window_start, window_end], orderBy=[total DESC], select=[window_start, window_end, b, total, rn])\n   changelog=[insert-only]"},
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY c) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 2",
			"WindowRank(window=[TUMBLE]"},
		// ORDER BY an expression: computed before the Rank, dropped after it.
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a + 1) AS rn FROM t) WHERE rn <= 3",
			"Project(select=[a, b, c, ts, (a + 1) AS $orderby4])"},
		// A view may hold the ROW_NUMBER(); the query reading it bounds it.
		{"CREATE VIEW v AS SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) AS rn FROM t;\nSELECT a FROM v WHERE rn <= 2", "rankRange=[rankStart=1, rankEnd=2]"},

		{"SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) AS rn FROM t",
			"error: 2:11: ROW_NUMBER() OVER needs a filter on its row number in an enclosing query: SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM t) WHERE rn <= N"},
		{"CREATE VIEW v AS SELECT *, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) AS rn FROM t;\nSELECT a FROM v", "error: 3:15: view v ranks rows with ROW_NUMBER(): filter on its row number, as in SELECT * FROM v WHERE rn <= N"},
		{"SELECT * FROM (SELECT *, RANK() OVER (PARTITION BY b ORDER BY c) AS rn FROM t) WHERE rn <= 2",
			"error: 2:26: RANK() is not supported: Top-N and deduplication number rows with ROW_NUMBER()"},
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY b) AS rn FROM t) WHERE rn <= 2", "error: 2:26: ROW_NUMBER() OVER needs an ORDER BY"},
		{"SELECT * FROM " + sub + " WHERE rn > 2", "error: 2:97: the filter on rn needs an upper bound: rn <= N keeps the top N rows, rn = 1 the first"},
		{"SELECT * FROM " + sub + " WHERE rn <= a", "error: 2:97: the filter on rn must bound it by constants"},
		{"SELECT * FROM " + sub + " WHERE rn <= 2 OR a > 1", "error: 2:97: the filter on rn must bound it by constants"},
		{"SELECT * FROM " + sub + " WHERE rn <= 2.5", "error: 2:97: the filter on rn must bound it by constants"},
		{"SELECT * FROM " + sub + " WHERE rn = 3 AND rn < 2", "error: 2:97: the filter on rn keeps no row: it asks for 3 to 1"},
		{"SELECT b, ROW_NUMBER() OVER (ORDER BY b) AS rn FROM t GROUP BY b", "error: 2:11: ROW_NUMBER() OVER cannot rank the groups of its own SELECT"},
		{"SELECT a FROM t WHERE ROW_NUMBER() OVER (ORDER BY b) = 1", "error: 2:23: ROW_NUMBER() OVER (...) may only be a select item of its own"},
		{"SELECT ROW_NUMBER() OVER (ORDER BY b) + 1 FROM t", "error: 2:8: ROW_NUMBER() OVER (...) may only be a select item of its own"},
		{"SELECT ROW_NUMBER() OVER (ORDER BY b) AS x, ROW_NUMBER() OVER (ORDER BY a) AS y FROM t", "error: 2:45: a SELECT can have one ROW_NUMBER() OVER (...)"},
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY NULL) AS rn FROM t) WHERE rn <= 2", "error: 2:54: cannot order by NULL"},
	}
	for _, c := range cases {
		if got := rankPlan(t, c.sql); !strings.Contains(got, c.want) {
			t.Errorf("%s:\n%s\nwant it to contain: %s", c.sql, got, c.want)
		}
	}
}
