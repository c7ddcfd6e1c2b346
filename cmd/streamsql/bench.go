package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql"
)

// The bids table of `streamsql bench`, in each format; $FILE is the generated file.
const (
	bidColumns = "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` TIMESTAMP(3), extra STRING"
	bidsJSON   = "CREATE TABLE bids (" + bidColumns + ") WITH ('connector' = 'filesystem', 'path' = '$JSON', 'format' = 'json');\n"
	bidsCSV    = "CREATE TABLE bids (" + bidColumns + ") WITH ('connector' = 'filesystem', 'path' = '$CSV', 'format' = 'csv');\n"
	bidsWM     = "CREATE TABLE bids (" + bidColumns + ",\n  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND)" +
		" WITH ('connector' = 'filesystem', 'path' = '$JSON', 'format' = 'json');\n"
	par2 = "SET 'parallelism.default' = '2';\n"

	filterSQL = "CREATE TABLE out (" + bidColumns + ") WITH ('connector' = 'blackhole');\n" +
		"INSERT INTO out SELECT * FROM bids WHERE price > 10000000;"
	// Nexmark's q1.
	projectSQL = "CREATE TABLE out (auction BIGINT, bidder BIGINT, price DECIMAL(23, 3), `dateTime` TIMESTAMP(3), extra STRING)" +
		" WITH ('connector' = 'blackhole');\n" +
		"INSERT INTO out SELECT auction, bidder, 0.908 * price AS price, `dateTime`, extra FROM bids;"
	// The window of Nexmark's q5, with its count and the greatest price.
	hopSQL = "CREATE TABLE out (auction BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), num BIGINT, max_price BIGINT)" +
		" WITH ('connector' = 'blackhole');\n" +
		"INSERT INTO out SELECT auction, window_start, window_end, COUNT(*), MAX(price)\n" +
		"  FROM TABLE(HOP(TABLE bids, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))\n" +
		"  GROUP BY auction, window_start, window_end;"
	groupSQL = "CREATE TABLE out (channel STRING, cnt BIGINT, avg_price DOUBLE) WITH ('connector' = 'blackhole');\n" +
		"INSERT INTO out SELECT channel, COUNT(*), AVG(CAST(price AS DOUBLE)) FROM bids GROUP BY channel;"
)

// benchWorkloads are whole queries run by `streamsql bench`, each over the generated
// bids in one format (none: its rows are generated), whose scan is its baseline.
var benchWorkloads = []struct{ name, format, sql string }{
	{"filter (json)", "json", bidsJSON + filterSQL},
	{"filter (json), parallelism 2", "json", par2 + bidsJSON + filterSQL},
	{"projection q1 (json)", "json", bidsJSON + projectSQL},
	{"filter (csv)", "csv", bidsCSV + filterSQL},
	{"filter (csv) on 2 tasks", "csv", par2 + bidsCSV + filterSQL},
	{"projection q1 (csv)", "csv", bidsCSV + projectSQL},
	{"HOP 10 s / 2 s count, max per auction (json)", "json", bidsWM + hopSQL},
	{"HOP 10 s / 2 s ..., parallelism 2", "json", par2 + bidsWM + hopSQL},
	{"GROUP BY channel count/avg (json)", "json", bidsJSON + groupSQL},
	{"datagen → GROUP BY 100k keys", "", `
CREATE TABLE gen (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '$ROWS',
  'rows-per-second' = '1000000000', 'seed' = '1',
  'fields.k.min' = '1', 'fields.k.max' = '100000', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT k, COUNT(*), SUM(v) FROM gen GROUP BY k;`},
}

// benchResult is one row of `streamsql bench`.
type benchResult struct {
	Workload    string  `json:"workload"`
	Format      string  `json:"format,omitempty"`
	Rows        int     `json:"rows"`
	Seconds     float64 `json:"seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	RowsPerSec  float64 `json:"rows_per_second"`
	RowsPerCore float64 `json:"rows_per_core_second"`
	// CPUVsScan is the workload's CPU time a row over the baseline scan's of the same
	// format (0 when it reads no file).
	CPUVsScan float64 `json:"cpu_vs_scan,omitempty"`
}

// bench measures whole queries: it writes the same bids as JSON lines and as CSV,
// times a hand-written scan of each file as the baseline, then runs each workload and
// reports rows/s, rows per CPU core-second (the process's CPU time) and its CPU a row
// over the scan's of its format, all in this one run.
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
	rows := fs.Int("rows", 4_000_000, "bids each workload reads")
	asJSON := fs.Bool("json", false, "print one JSON object per workload instead of a table")
	only := fs.String("workloads", "", "run only the workloads whose names contain one of these comma-separated words")
	profile := fs.String("cpuprofile", "", "write each workload's CPU profile to `PREFIX`.<n>.prof (for go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return parseFailed(err)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "streamsql bench: %v\n", err)
		return 1
	}
	if *rows < 1 {
		return fail(fmt.Errorf("-rows must be at least 1, got %d", *rows))
	}
	dir, err := os.MkdirTemp("", "streamsql-bench")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{"json": filepath.Join(dir, "bids.json"), "csv": filepath.Join(dir, "bids.csv")}
	if err := writeBids(files["json"], files["csv"], *rows); err != nil {
		return fail(err)
	}
	print := func(r benchResult) {
		if *asJSON {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
			return
		}
		ratio := "-"
		if r.CPUVsScan > 0 {
			ratio = fmt.Sprintf("%.2f", r.CPUVsScan)
		}
		fmt.Fprintf(stdout, "%-46s %12.0f %14.0f %12s\n", r.Workload, r.RowsPerSec, r.RowsPerCore, ratio)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "%-46s %12s %14s %12s\n", "workload", "rows/s", "rows/core·s", "CPU vs scan")
	}
	base := map[string]float64{} // CPU seconds a row of each format's scan
	for _, f := range []string{"json", "csv"} {
		r, err := measure(func() (int, error) { return scanBids(files[f], f) })
		if err != nil {
			return fail(err)
		}
		if r.Rows != *rows {
			return fail(fmt.Errorf("the %s scan read %d rows of %d", f, r.Rows, *rows))
		}
		r.Workload, r.Format, r.CPUVsScan = "baseline: hand-written scan ("+f+")", f, 1
		base[f] = r.CPUSeconds / float64(r.Rows)
		print(r)
	}
	for i, w := range benchWorkloads {
		if !selected(w.name, *only) {
			continue
		}
		sql := strings.NewReplacer("$JSON", files["json"], "$CSV", files["csv"], "$ROWS", fmt.Sprint(*rows)).Replace(w.sql)
		var stop func()
		if *profile != "" {
			if stop, err = startProfile(fmt.Sprintf("%s.%d.prof", *profile, i)); err != nil {
				return fail(err)
			}
		}
		r, err := measure(func() (int, error) { return *rows, runScript(sql) })
		if stop != nil {
			stop()
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %v", w.name, err))
		}
		r.Workload, r.Format = w.name, w.format
		if w.format != "" {
			r.CPUVsScan = r.CPUSeconds / float64(r.Rows) / base[w.format]
		}
		print(r)
	}
	return 0
}

// selected says whether a workload named name is among the comma-separated words of
// only (every workload when only is empty).
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, w := range strings.Split(only, ",") {
		if w = strings.TrimSpace(w); w != "" && strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// measure runs f, which returns the rows it read, and times it in wall-clock and in
// the process's CPU time, after a collection so that earlier garbage is not its cost.
func measure(f func() (int, error)) (benchResult, error) {
	runtime.GC()
	cpu0, start := cpuTime(), time.Now()
	n, err := f()
	r := benchResult{Rows: n, Seconds: time.Since(start).Seconds(), CPUSeconds: (cpuTime() - cpu0).Seconds()}
	if err != nil {
		return r, err
	}
	r.RowsPerSec = float64(n) / r.Seconds
	r.RowsPerCore = float64(n) / r.CPUSeconds
	return r, nil
}

// runScript runs a script's statements to the end of their input.
func runScript(sql string) error {
	session, err := streamsql.NewSession(streamsql.Config{Out: io.Discard, Err: io.Discard, Format: "csv"})
	if err != nil {
		return err
	}
	defer session.Close()
	if err := session.Exec(context.Background(), sql); err != nil {
		return err
	}
	return session.Wait()
}

// writeBids writes n bids shaped as Nexmark's (hot auctions, bidders and channels,
// log-uniform prices, 10,000 events a second of event time from 2015-07-15) to
// jsonPath as JSON lines and to csvPath as CSV, the same bids in both.
func writeBids(jsonPath, csvPath string, n int) error {
	jf, err := os.Create(jsonPath)
	if err != nil {
		return err
	}
	defer jf.Close()
	cf, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	jw, cw := bufio.NewWriterSize(jf, 1<<20), bufio.NewWriterSize(cf, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	hot := []string{"Google", "Facebook", "Baidu", "Apple"}
	base := time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC).UnixMilli()
	word := func(b []byte, n int) []byte {
		for range n {
			b = append(b, byte('a'+r.IntN(26)))
		}
		return b
	}
	var line, url, extra []byte
	for i := 0; i < n; i++ {
		event := int64(i)
		lastAuction := 1000 + event/50*3 + 2
		lastPerson := 1000 + event/50
		auction := lastAuction / 100 * 100
		if r.IntN(2) == 0 {
			auction = max(1000, lastAuction-100+int64(r.IntN(110)))
		}
		bidder := lastPerson/100*100 + 1
		if r.IntN(4) == 0 {
			bidder = max(1000, lastPerson-1000+int64(r.IntN(1010)))
		}
		price := int64(math.Round(math.Pow(10, 6*r.Float64()) * 100))
		var channel string
		url = url[:0]
		if r.IntN(2) == 0 {
			c := r.IntN(len(hot))
			channel = hot[c]
			url = append(url, "https://www.nexmark.com/"...)
			url = append(url, strings.ToLower(hot[c])...)
			url = append(url, "/item.htm?query=1"...)
		} else {
			channel = "channel-" + strconv.Itoa(r.IntN(10000))
			url = append(url, "https://www.nexmark.com/"...)
			for k := range 3 {
				if k > 0 {
					url = append(url, '/')
				}
				url = word(url, 5)
			}
			url = append(url, "/item.htm?query=1"...)
			if r.IntN(10) == 0 {
				url = append(url, "&channel_id="...)
				url = strconv.AppendInt(url, int64(r.IntN(10000)), 10)
			}
		}
		extra = word(extra[:0], r.IntN(24))
		ts := time.UnixMilli(base + event*1000/10000).UTC().Format("2006-01-02 15:04:05.000")

		line = append(line[:0], `{"auction":`...)
		line = strconv.AppendInt(line, auction, 10)
		line = append(line, `,"bidder":`...)
		line = strconv.AppendInt(line, bidder, 10)
		line = append(line, `,"price":`...)
		line = strconv.AppendInt(line, price, 10)
		line = append(line, `,"channel":"`...)
		line = append(line, channel...)
		line = append(line, `","url":"`...)
		line = append(line, url...)
		line = append(line, `","dateTime":"`...)
		line = append(line, ts...)
		line = append(line, `","extra":"`...)
		line = append(line, extra...)
		line = append(line, "\"}\n"...)
		if _, err := jw.Write(line); err != nil {
			return err
		}
		line = strconv.AppendInt(line[:0], auction, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, bidder, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, price, 10)
		line = append(line, ',')
		line = append(line, channel...)
		line = append(line, ',')
		line = append(line, url...)
		line = append(line, ',')
		line = append(line, ts...)
		line = append(line, ',')
		line = append(line, extra...)
		line = append(line, '\n')
		if _, err := cw.Write(line); err != nil {
			return err
		}
	}
	if err := jw.Flush(); err != nil {
		return err
	}
	if err := cw.Flush(); err != nil {
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	return cf.Close()
}

// scanBids is the baseline: a hand-written scan of a bids file that reads every field
// of every line as its column's type: it splits the lines and their fields, parses the
// integers and the timestamp, and takes each string (a slice of the line, as a reader
// without escapes would). It returns the lines read.
func scanBids(path, format string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ints [3]int64
	var sum, strs int64
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		var fields [7][]byte
		var ok bool
		if format == "json" {
			ok = splitJSONBid(line, &fields)
		} else {
			ok = splitCSVBid(line, &fields)
		}
		if !ok {
			return n, fmt.Errorf("%s: line %d is not a bid", path, n+1)
		}
		for k := range ints {
			if ints[k], ok = scanInt(fields[k]); !ok {
				return n, fmt.Errorf("%s: line %d: bad number", path, n+1)
			}
		}
		ts, ok := scanTimestamp(fields[5])
		if !ok {
			return n, fmt.Errorf("%s: line %d: bad timestamp", path, n+1)
		}
		sum += ints[0] + ints[1] + ints[2] + ts
		strs += int64(len(fields[3]) + len(fields[4]) + len(fields[6]))
		n++
	}
	if sum == 0 && strs == 0 && n > 0 { // keeps the sums live
		return n, fmt.Errorf("%s: no values", path)
	}
	return n, sc.Err()
}

// splitJSONBid cuts a JSON object of seven fields in the bid's order into their
// values: strings without their quotes, numbers as they are.
func splitJSONBid(line []byte, fields *[7][]byte) bool {
	p := 1
	for k := range fields {
		q := bytes.IndexByte(line[p:], ':') // after the field's name
		if q < 0 {
			return false
		}
		p += q + 1
		if p < len(line) && line[p] == '"' {
			e := bytes.IndexByte(line[p+1:], '"')
			if e < 0 {
				return false
			}
			fields[k] = line[p+1 : p+1+e]
			p += e + 2
		} else {
			e := p
			for e < len(line) && line[e] != ',' && line[e] != '}' {
				e++
			}
			fields[k] = line[p:e]
			p = e
		}
		p++ // the ',' or '}'
	}
	return true
}

// splitCSVBid cuts a CSV line of seven unquoted fields.
func splitCSVBid(line []byte, fields *[7][]byte) bool {
	for k := range fields {
		e := bytes.IndexByte(line, ',')
		if k == len(fields)-1 {
			fields[k] = line
			return e < 0
		}
		if e < 0 {
			return false
		}
		fields[k], line = line[:e], line[e+1:]
	}
	return true
}

func scanInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c-'0' > 9 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// scanTimestamp reads "yyyy-mm-dd hh:mm:ss.fff" as epoch milliseconds.
func scanTimestamp(b []byte) (int64, bool) {
	if len(b) != 23 || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' || b[19] != '.' {
		return 0, false
	}
	num := func(s []byte) int64 { n, _ := scanInt(s); return n }
	y, m, d := num(b[0:4]), num(b[5:7]), num(b[8:10])
	// Days from the civil date (Howard Hinnant's algorithm).
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return days*86400000 + num(b[11:13])*3600000 + num(b[14:16])*60000 + num(b[17:19])*1000 + num(b[20:23]), true
}
