package expr

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// BenchmarkFunctions evaluates functions of the table over a column: numeric ones over
// (id BIGINT, ts BIGINT, temperature DOUBLE), string ones over s STRING.
func BenchmarkFunctions(b *testing.B) {
	numeric := []string{
		"LN(temperature)", "GREATEST(temperature, 30, id)", "SIGN(temperature - 30)", "TRUNCATE(temperature, 1)",
		"id IS DISTINCT FROM ts", "IF(temperature > 30, id, ts)", "TIMESTAMPADD(HOUR, 1, TO_TIMESTAMP_LTZ(ts, 3))",
		"HOUR(TO_TIMESTAMP_LTZ(ts, 3))", "HEX(id)",
	}
	strs := []string{
		"REGEXP_EXTRACT(s, 'sensor-([0-9]+)', 1)", "REGEXP_REPLACE(s, '[0-9]+', '#')", "SPLIT_INDEX(s, '-', 1)",
		"LPAD(s, 24, '*')", "CONCAT_WS('/', s, s)", "MD5(s)", "REVERSE(s)", "INITCAP(s)",
	}
	sensor := planner.Schema{{Name: "id", Type: planner.TypeBigInt}, {Name: "ts", Type: planner.TypeBigInt}, {Name: "temperature", Type: planner.TypeDouble}}
	text := planner.Schema{{Name: "s", Type: planner.TypeString}}
	run := func(sql string, schema planner.Schema, batch func(memory.Allocator, int) arrow.Record, rowBytes int) {
		ast, err := parser.ParseExpr(sql)
		if err != nil {
			b.Fatal(err)
		}
		e, err := planner.BindExpr(ast, schema)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/rows=%d", sql, n), func(b *testing.B) {
				mem := memory.NewGoAllocator()
				rec := batch(mem, n)
				defer rec.Release()
				ev := mustCompile(b, e, mem)
				benchBatches(b, n, rowBytes, func() { mustEval(b, ev, rec) })
			})
		}
	}
	for _, sql := range numeric {
		run(sql, sensor, sensorBatch, 24)
	}
	for _, sql := range strs {
		run(sql, text, func(mem memory.Allocator, n int) arrow.Record {
			return stringBatch(mem, n, func(i int) string { return "sensor-" + strconv.Itoa(i) + "-room" })
		}, 16)
	}
}
