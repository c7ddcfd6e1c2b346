package planner

import (
	"testing"

	"github.com/streamsql/streamsql/parser"
)

// FuzzPlan plans parsed queries over a small catalog: whatever the text, planning
// returns a plan or an error, never a panic, and a plan prints.
func FuzzPlan(f *testing.F) {
	for _, q := range []string{
		"SELECT id, UPPER(name), price * 2 FROM t WHERE price > 10",
		"SELECT name, COUNT(*), SUM(price), AVG(price) FROM t GROUP BY name HAVING COUNT(*) > 1",
		"SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
		"SELECT a.id, b.name FROM t a LEFT JOIN t b ON a.id = b.id AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' MINUTE",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY name ORDER BY price DESC) AS rn FROM t) WHERE rn <= 3",
		"SELECT CAST(price AS STRING), CASE WHEN id > 1 THEN 'a' ELSE NULL END, COALESCE(name, 'x') FROM t",
		"SELECT 1 + 1, 'a' || 'b', INTERVAL '1' DAY, DATE '2024-01-01'",
	} {
		f.Add(q)
	}
	table, err := parser.Parse(`CREATE TABLE t (id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen')`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		script, err := parser.Parse(sql)
		if err != nil || len(script.Stmts) != 1 {
			return
		}
		q, ok := script.Stmts[0].(*parser.QueryStmt)
		if !ok {
			return
		}
		cat := NewCatalog()
		tbl, err := BindTable(table.Stmts[0].(*parser.CreateTableStmt))
		if err != nil {
			t.Fatal(err)
		}
		cat.AddTable(tbl)
		plan, err := (&Planner{Catalog: cat}).PlanQuery(q.Query)
		if err == nil {
			_ = Explain(plan, func(Node) int { return 1 })
		}
	})
}
