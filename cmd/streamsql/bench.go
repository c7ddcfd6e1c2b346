package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamsql/streamsql"
)

// benchWorkloads are whole queries run by `streamsql bench`. $FILE is the generated
// JSON-lines file of sensor readings.
var benchWorkloads = []struct{ name, sql string }{
	{"filter → blackhole", `
CREATE TABLE readings (id STRING, ts BIGINT, temperature DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '$FILE', 'format' = 'json');
CREATE TABLE out (id STRING, ts BIGINT, temperature DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM readings WHERE temperature > 30;`},
	{"GROUP BY id count/avg → blackhole", `
CREATE TABLE readings (id STRING, ts BIGINT, temperature DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '$FILE', 'format' = 'json');
CREATE TABLE out (id STRING, cnt BIGINT, avg_temp DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT id, COUNT(*), AVG(temperature) FROM readings GROUP BY id;`},
	// The same two at parallelism 2: the tasks split the one file by byte ranges.
	{"filter → blackhole, parallelism 2", `
SET 'parallelism.default' = '2';
CREATE TABLE readings (id STRING, ts BIGINT, temperature DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '$FILE', 'format' = 'json');
CREATE TABLE out (id STRING, ts BIGINT, temperature DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT * FROM readings WHERE temperature > 30;`},
	{"GROUP BY id count/avg → blackhole, parallelism 2", `
SET 'parallelism.default' = '2';
CREATE TABLE readings (id STRING, ts BIGINT, temperature DOUBLE)
  WITH ('connector' = 'filesystem', 'path' = '$FILE', 'format' = 'json');
CREATE TABLE out (id STRING, cnt BIGINT, avg_temp DOUBLE) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT id, COUNT(*), AVG(temperature) FROM readings GROUP BY id;`},
	{"datagen → GROUP BY 100k keys → blackhole", `
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '$ROWS',
  'rows-per-second' = '1000000000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '100000', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k;`},
}

// bench measures whole queries: it writes a file of readings, times a plain line scan of
// it as the baseline, then times each workload and reports rows/s and the ratio to the
// baseline, all in this one run.
func bench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "nexmark" {
		return benchNexmark(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("streamsql bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs, "bench")
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	rows := fs.Int("rows", 1_000_000, "rows per workload")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	dir, err := os.MkdirTemp("", "streamsql-bench")
	if err != nil {
		fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "readings.json")
	if err := writeReadings(file, *rows); err != nil {
		fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
		return 1
	}
	start := time.Now()
	lines, err := countLines(file)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
		return 1
	}
	base := float64(lines) / time.Since(start).Seconds()
	fmt.Fprintf(stdout, "%-50s %14s %10s\n", "workload", "rows/s", "vs scan")
	fmt.Fprintf(stdout, "%-50s %14.0f %10s\n", "baseline: line scan of the JSON file", base, "1.00")
	for _, w := range benchWorkloads {
		sql := strings.NewReplacer("$FILE", file, "$ROWS", fmt.Sprint(*rows)).Replace(w.sql)
		session, err := streamsql.NewSession(streamsql.Config{Out: io.Discard, Err: stderr, Format: "csv"})
		if err != nil {
			fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
			return 1
		}
		start := time.Now()
		err = session.Exec(context.Background(), sql)
		if err == nil {
			err = session.Wait()
		}
		if err != nil {
			fmt.Fprintf(stderr, "streamsql bench: %s: %v\n", w.name, err)
			return 1
		}
		rate := float64(*rows) / time.Since(start).Seconds()
		fmt.Fprintf(stdout, "%-50s %14.0f %10.2f\n", w.name, rate, rate/base)
	}
	return 0
}

// writeReadings writes n JSON lines of (id, ts, temperature) for 1000 sensors.
func writeReadings(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"id":"sensor_%d","ts":%d,"temperature":%.1f}`+"\n", r.IntN(1000), 1547718199+i, r.Float64()*50)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
