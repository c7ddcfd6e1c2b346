package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestBenchJSON runs `streamsql bench` small: the two scans and the workloads asked
// for, each a JSON object with its CPU a row against its format's scan.
func TestBenchJSON(t *testing.T) {
	var out, errs bytes.Buffer
	if code := bench([]string{"-rows", "3000", "--json", "--workloads", "csv) on 2 tasks,HOP 10 s / 2 s count"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r benchResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Rows != 3000 || r.CPUSeconds <= 0 || r.RowsPerCore <= 0 || r.CPUVsScan <= 0 {
			t.Errorf("%+v: a figure is missing", r)
		}
		got = append(got, r.Format+" "+r.Workload)
	}
	want := "json baseline: hand-written scan (json)|csv baseline: hand-written scan (csv)|" +
		"csv filter (csv) on 2 tasks|json HOP 10 s / 2 s count, max per auction (json)"
	if strings.Join(got, "|") != want {
		t.Errorf("workloads %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestScanBids checks the baseline's parsing against the generator's values.
func TestScanBids(t *testing.T) {
	var fields [7][]byte
	line := []byte(`{"auction":1002,"bidder":1001,"price":4512,"channel":"Google","url":"https://x/y","dateTime":"2015-07-15 00:00:01.500","extra":""}`)
	if !splitJSONBid(line, &fields) {
		t.Fatal("not split")
	}
	if string(fields[0]) != "1002" || string(fields[3]) != "Google" || string(fields[4]) != "https://x/y" || string(fields[6]) != "" {
		t.Errorf("fields %q", fields)
	}
	ts, ok := scanTimestamp(fields[5])
	if want := time.Date(2015, 7, 15, 0, 0, 1, 500e6, time.UTC).UnixMilli(); !ok || ts != want {
		t.Errorf("timestamp %d, want %d", ts, want)
	}
	if !splitCSVBid([]byte("1002,1001,4512,Google,https://x/y,2016-02-29 23:59:59.999,"), &fields) {
		t.Fatal("csv not split")
	}
	ts, ok = scanTimestamp(fields[5])
	if want := time.Date(2016, 2, 29, 23, 59, 59, 999e6, time.UTC).UnixMilli(); !ok || ts != want {
		t.Errorf("csv timestamp %d, want %d", ts, want)
	}
}
