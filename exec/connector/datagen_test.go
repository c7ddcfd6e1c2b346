package connector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/planner"
)

var everyType = planner.Schema{
	{Name: "b", Type: planner.TypeBoolean},
	{Name: "i", Type: planner.TypeInt},
	{Name: "l", Type: planner.TypeBigInt},
	{Name: "d", Type: planner.TypeDouble},
	{Name: "m", Type: planner.DecimalType(10, 2)},
	{Name: "s", Type: planner.TypeString},
	{Name: "ts", Type: planner.TypeTS},
	{Name: "lt", Type: planner.TypeTSLTZ},
	{Name: "dt", Type: planner.TypeDate},
}

func TestDatagenDeterministicBySeed(t *testing.T) {
	mem := checkedMem(t)
	opts := map[string]string{
		"connector": "datagen", "seed": "42", "number-of-rows": "1000", "rows-per-second": "100000000",
		"fields.s.length": "20", "fields.d.null-rate": "0.3", "fields.ts.max-past": "5s",
		"fields.dt.max-past": "10d", "fields.i.min": "-5", "fields.i.max": "5",
	}
	read := func(batch int) (string, int) {
		r := openSource(t, mem, table("gen", everyType, opts), batch)
		defer r.Close()
		rows, batches, err := drain(t, r, 1)
		if err != nil {
			t.Fatal(err)
		}
		return rows, batches
	}
	a, na := read(1024)
	b, nb := read(7) // other batch boundaries, same rows
	if a != b {
		t.Fatal("same seed, different rows")
	}
	if na != 1 || nb != 143 {
		t.Errorf("batches %d and %d", na, nb)
	}
	if n := strings.Count(a, "\n"); n != 1000 {
		t.Errorf("%d rows, want 1000", n)
	}
	opts["seed"] = "43"
	if c, _ := read(1024); c == a {
		t.Error("another seed gave the same rows")
	}
	// Seeded timestamps count back from 2020-01-01 00:00:00 within max-past.
	first := strings.SplitN(a, "\n", 2)[0]
	if !strings.Contains(first, ", 2019-12-31 23:59:5") && !strings.Contains(first, ", 2020-01-01 00:00:00.000") {
		t.Errorf("timestamp not within 5s before 2020-01-01: %s", first)
	}
}

func TestDatagenRangesAndNulls(t *testing.T) {
	mem := checkedMem(t)
	r := openSource(t, mem, table("gen", everyType, map[string]string{
		"connector": "datagen", "number-of-rows": "5000", "rows-per-second": "100000000",
		"fields.i.min": "-3", "fields.i.max": "3", "fields.l.min": "100", "fields.l.max": "100",
		"fields.d.min": "0.5", "fields.d.max": "1.5", "fields.m.min": "-1.5", "fields.m.max": "1.5",
		"fields.s.length": "3", "fields.b.null-rate": "1", "fields.dt.null-rate": "0.5",
	}), 1000)
	defer r.Close()
	nulls, rows := 0, 0
	for {
		b, err := r.Next(context.Background())
		if err != nil {
			break
		}
		rec := b.Rec
		rows += b.Len()
		if rec.Column(0).NullN() != rec.Column(0).Len() {
			t.Error("null-rate 1 left values")
		}
		nulls += rec.Column(8).NullN()
		for k, v := range rec.Column(1).(*array.Int32).Int32Values() {
			if v < -3 || v > 3 {
				t.Fatalf("int %d out of range", v)
			}
			if l := rec.Column(2).(*array.Int64).Value(k); l != 100 {
				t.Fatalf("bigint %d", l)
			}
			if d := rec.Column(3).(*array.Float64).Value(k); d < 0.5 || d > 1.5 {
				t.Fatalf("double %v", d)
			}
			if m := rec.Column(4).(*array.Decimal128).Value(k).ToFloat64(2); m < -1.5 || m > 1.5 {
				t.Fatalf("decimal %v", m)
			}
			if s := rec.Column(5).(*array.String).Value(k); len(s) != 3 || strings.Trim(s, "0123456789abcdef") != "" {
				t.Fatalf("string %q", s)
			}
		}
		b.Release()
	}
	if rows != 5000 {
		t.Errorf("%d rows", rows)
	}
	if nulls < 2000 || nulls > 3000 {
		t.Errorf("%d nulls of 5000 at rate 0.5", nulls)
	}
}

func TestDatagenSequenceEnds(t *testing.T) {
	mem := checkedMem(t)
	schema := planner.Schema{
		{Name: "id", Type: planner.TypeBigInt},
		{Name: "name", Type: planner.TypeString},
		{Name: "price", Type: planner.DecimalType(5, 2)},
	}
	r := openSource(t, mem, table("seq", schema, map[string]string{
		"connector": "datagen", "rows-per-second": "100000000",
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "5",
		"fields.name.kind": "sequence", "fields.name.start": "10", "fields.name.end": "100",
		"fields.price.kind": "sequence", "fields.price.start": "-1", "fields.price.end": "999",
	}), 2)
	defer r.Close()
	rows, batches, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "+I[1, 10, -1.00]\n+I[2, 11, 0.00]\n+I[3, 12, 1.00]\n+I[4, 13, 2.00]\n+I[5, 14, 3.00]\n"
	if rows != want || batches != 3 {
		t.Errorf("rows (%d batches):\n%s\nwant:\n%s", batches, rows, want)
	}
	if p := r.(*DatagenReader).Position(); p != 5 {
		t.Errorf("position %d", p)
	}
}

func TestDatagenBoundedCount(t *testing.T) {
	mem := checkedMem(t)
	r := openSource(t, mem, table("gen", everyType, map[string]string{
		"connector": "datagen", "number-of-rows": "2500", "rows-per-second": "100000000",
	}), 0)
	defer r.Close()
	rows, batches, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rows, "\n"); n != 2500 || batches != 3 {
		t.Errorf("%d rows in %d batches", n, batches)
	}
	empty := openSource(t, mem, table("gen", everyType, map[string]string{"connector": "datagen", "number-of-rows": "0"}), 0)
	defer empty.Close()
	if rows, _, err := drain(t, empty, 1); rows != "" || err != nil {
		t.Errorf("number-of-rows 0: %q, %v", rows, err)
	}
}

func TestDatagenPacing(t *testing.T) {
	mem := checkedMem(t)
	r := openSource(t, mem, table("gen", sensors, map[string]string{
		"connector": "datagen", "number-of-rows": "30", "rows-per-second": "200",
	}), 0)
	defer r.Close()
	start := time.Now()
	rows, batches, err := drain(t, r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// A burst of 10 rows (50 ms worth), then 20 more at 200/s: about 100 ms.
	if el := time.Since(start); el < 80*time.Millisecond || el > 3*time.Second {
		t.Errorf("30 rows at 200/s took %v", el)
	}
	if n := strings.Count(rows, "\n"); n != 30 || batches < 3 {
		t.Errorf("%d rows in %d batches", n, batches)
	}
}

func TestDatagenUnboundedReturnsEmptyBatchesWhenPaced(t *testing.T) {
	mem := checkedMem(t)
	r := openSource(t, mem, table("gen", sensors, map[string]string{"connector": "datagen", "rows-per-second": "1"}), 0)
	defer r.Close()
	ctx := context.Background()
	b, err := r.Next(ctx) // the first row is there at once
	if err != nil || b.Len() != 1 {
		t.Fatalf("first batch: %d rows, %v", b.Len(), err)
	}
	b.Release()
	start := time.Now()
	b, err = r.Next(ctx)
	if err != nil || b.Rec != nil {
		t.Fatalf("second batch: %v, %v", b.Rec, err)
	}
	if el := time.Since(start); el < 40*time.Millisecond || el > time.Second {
		t.Errorf("empty poll took %v", el)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Next(cctx); err == nil {
		t.Error("no error with a cancelled context")
	}
}

func BenchmarkDatagen(b *testing.B) {
	tbl := table("gen", planner.Schema{
		{Name: "id", Type: planner.TypeBigInt},
		{Name: "v", Type: planner.TypeDouble},
		{Name: "n", Type: planner.TypeInt},
		{Name: "ts", Type: planner.TypeTS},
		{Name: "s", Type: planner.TypeString},
	}, map[string]string{"connector": "datagen", "rows-per-second": "100000000", "fields.s.length": "8",
		"fields.id.kind": "sequence", "fields.id.start": "0", "fields.id.end": "9223372036854775806"})
	r, err := OpenSource(context.Background(), SourceSpec{Table: tbl, BatchSize: 4096})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	rows := 0
	for n := 0; n < b.N; n++ {
		batch, err := r.Next(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		rows += batch.Len()
		batch.Release()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows*5)/b.Elapsed().Seconds(), "values/s")
}

// TestDatagenTime: a TIME column is the base's time of day (Flink's datagen gives the
// current time), up to max-past before it, at the column's precision; a seeded run
// counts back from 2020-01-01 00:00:00.
func TestDatagenTime(t *testing.T) {
	mem := checkedMem(t)
	cols := planner.Schema{{Name: "t", Type: planner.TimeType(0)}, {Name: "t3", Type: planner.TimeType(3)}}
	r := openSource(t, mem, table("gen", cols, map[string]string{
		"connector": "datagen", "seed": "7", "number-of-rows": "200", "rows-per-second": "100000000",
		"fields.t.max-past": "1 h",
	}), 1000)
	defer r.Close()
	rows, _, err := drain(t, r, 1)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rows), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d rows", len(lines))
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, ", 00:00:00.000]") || !strings.Contains(l, "[23:") && !strings.Contains(l, "[00:00:00,") {
			t.Fatalf("row %s: want a TIME(0) within the hour before midnight and TIME(3) 00:00:00.000", l)
		}
	}
}
