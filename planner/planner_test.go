package planner

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/parser"
)

func TestArithmeticResultTypes(t *testing.T) {
	cases := []struct {
		fn   Func
		a, b Type
		want string
	}{
		{FnAdd, TypeInt, TypeInt, "INT"},
		{FnAdd, TypeInt, TypeBigInt, "BIGINT"},
		{FnMul, TypeBigInt, TypeDouble, "DOUBLE"},
		{FnAdd, DecimalType(5, 2), DecimalType(7, 3), "DECIMAL(8, 3)"},
		{FnMul, DecimalType(5, 2), TypeInt, "DECIMAL(15, 2)"},
		{FnDiv, DecimalType(10, 2), DecimalType(5, 0), "DECIMAL(16, 8)"},    // scale max(6, s1+p2+1)
		{FnMul, DecimalType(30, 10), DecimalType(20, 10), "DECIMAL(38, 8)"}, // over 38 digits: scale gives way, not below 6
		{FnMod, DecimalType(10, 2), DecimalType(5, 0), "DECIMAL(7, 2)"},
	}
	for _, c := range cases {
		got, ok := arithmeticType(c.fn, c.a, c.b)
		if !ok || got.String() != c.want {
			t.Errorf("%s %s %s = %s (%v), want %s", c.a, c.fn, c.b, got, ok, c.want)
		}
	}
	if _, ok := arithmeticType(FnAdd, TypeString, TypeInt); ok {
		t.Error("STRING + INT accepted")
	}
}

func TestCommonType(t *testing.T) {
	cases := []struct {
		a, b Type
		want string
	}{
		{TypeInt, TypeBigInt, "BIGINT"},
		{TypeNull, TypeDate, "DATE"},
		{DecimalType(5, 2), TypeInt, "DECIMAL(12, 2)"},
		{DecimalType(5, 2), TypeDouble, "DOUBLE"},
		{Type{Kind: String, Length: 3}, TypeString, "STRING"},
		{TypeTS, TypeDate, "TIMESTAMP(3)"},
	}
	for _, c := range cases {
		got, ok := commonType(c.a, c.b)
		if !ok || got.String() != c.want {
			t.Errorf("common(%s, %s) = %s (%v), want %s", c.a, c.b, got, ok, c.want)
		}
	}
	if _, ok := commonType(TypeString, TypeInt); ok {
		t.Error("STRING and INT have a common type")
	}
}

// plan binds a query over t(a INT, b STRING, c DOUBLE) and returns the plan's EXPLAIN
// text, or the error.
func plan(t *testing.T, sql string) string {
	t.Helper()
	_, n, err := planOver(t, `CREATE TABLE t (a INT, b STRING, c DOUBLE) WITH ('connector' = 'datagen');`, sql)
	if err != nil {
		return "error: " + err.Error()
	}
	return Explain(n, func(Node) int { return 1 })
}

// planOver binds the table of ddl, then plans query over it; it returns the table, and
// the plan or the planning error.
func planOver(t *testing.T, ddl, query string) (*Table, Node, error) {
	t.Helper()
	script, err := parser.Parse(ddl + query)
	if err != nil {
		t.Fatal(err)
	}
	cat := NewCatalog()
	table, err := BindTable(script.Stmts[0].(*parser.CreateTableStmt))
	if err != nil {
		t.Fatal(err)
	}
	cat.AddTable(table)
	n, err := (&Planner{Catalog: cat}).PlanQuery(script.Stmts[1].(*parser.QueryStmt).Query)
	return table, n, err
}

func TestPlans(t *testing.T) {
	// Error columns count from the start of the script: the query starts at column 82,
	// after the CREATE TABLE that plan puts before it.
	cases := []struct{ sql, want string }{
		// A literal is cast at plan time, so the filter compares a DOUBLE with a DOUBLE.
		{"SELECT a FROM t WHERE c > 30", "Filter(where=[(c > 30)])"},
		// GROUP BY: keys and arguments are projected, the aggregate updates, HAVING filters it.
		{"SELECT b, SUM(a) AS s FROM t GROUP BY b HAVING COUNT(*) > 1", "GroupAggregate(groupBy=[b], select=[b, SUM($arg1) AS s, COUNT(*) AS EXPR$1])"},
		{"SELECT DISTINCT b FROM t", "GroupAggregate(groupBy=[b], select=[b])"},
		{"SELECT a + 1 AS x FROM (SELECT a FROM t) AS s", "Project(select=[(a + 1) AS x])"},
		{"SELECT nope FROM t", "error: 1:82: unknown column `nope` (candidates: `a`, `b`, `c`)"},
		{"SELECT a FROM t GROUP BY b", "error: 1:82: column `a` must appear in GROUP BY or be used in an aggregate function"},
		{"SELECT SUM(b) FROM t", "error: 1:82: SUM needs a numeric argument, got STRING"},
		{"SELECT a FROM t WHERE b", "error: 1:97: WHERE needs a BOOLEAN condition, got STRING"},
		{"SELECT COUNT(SUM(a)) FROM t", "error: 1:88: aggregate calls cannot be nested"},
	}
	for _, c := range cases {
		if got := plan(t, c.sql); !strings.Contains(got, c.want) {
			t.Errorf("%s:\n%s\nwant it to contain: %s", c.sql, got, c.want)
		}
	}
}

// Bounds on a left and a right time make an interval join, written in ON or, for an
// inner join, in WHERE. A bound by a window aggregate's window_end, which is no
// event-time attribute, expires only the other side's rows.
func TestTimeBoundsMakeIntervalJoins(t *testing.T) {
	const ddl = `CREATE TABLE e (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');`
	const maxes = `(SELECT MAX(v) AS mv, window_end AS we FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end)`
	cases := []struct{ sql, want, not string }{
		{"SELECT * FROM e a JOIN e b ON a.k = b.k WHERE a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND",
			"IntervalJoin(joinType=[INNER], where=[k = k0 AND ts - ts0 BETWEEN 0s AND 1s])\n", "Filter"},
		{"SELECT * FROM e a LEFT JOIN e b ON a.k = b.k WHERE a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND",
			"Join(joinType=[LEFT], where=[k = k0])", "IntervalJoin"},
		{"SELECT a.k, m.we FROM e a JOIN " + maxes + " m ON a.v = m.mv WHERE a.ts BETWEEN m.we - INTERVAL '10' SECOND AND m.we",
			"IntervalJoin(joinType=[INNER], where=[v = mv AND ts - we BETWEEN -10s AND 0s], expires=[left])", "Filter"},
		{"SELECT a.k, m.we FROM " + maxes + " m JOIN e a ON a.v = m.mv AND a.ts >= m.we - INTERVAL '10' SECOND",
			"IntervalJoin(joinType=[INNER], where=[mv = v AND we - ts <= 10s], expires=[right])", ""},
		// A window table function's rows are not final: a late one ends before the watermark.
		{"SELECT a.k FROM e a JOIN (SELECT * FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND))) w ON a.k = w.k WHERE a.ts >= w.window_end - INTERVAL '10' SECOND",
			"Join(joinType=[INNER], where=[k = k0])", "IntervalJoin"},
		{"SELECT a.k, m.we FROM e a LEFT JOIN " + maxes + " m ON a.v = m.mv AND a.ts >= m.we - INTERVAL '10' SECOND",
			"Join(joinType=[LEFT], where=[v = mv AND (ts >= (we - 10000))])", "IntervalJoin"},
	}
	for _, c := range cases {
		_, n, err := planOver(t, ddl, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		got := Explain(n, func(Node) int { return 1 })
		if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s:\n%s\nwant it to contain %q and not %q", c.sql, got, c.want, c.not)
		}
	}
}
