package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNexmarkQ10AgainstReference runs queries/nexmark/q10.sql as the suite writes it
// (its sink's path moved to a temporary directory), with checkpoints, over 10 minutes of
// event time, and compares the partition directories it commits with the reference:
// every bid in dt=<its day>/hm=<its minute, ':' escaped>, and a _SUCCESS in each.
func TestNexmarkQ10AgainstReference(t *testing.T) {
	const events, rate = 1200, 2 // 600 seconds of event time
	text, err := os.ReadFile("../queries/nexmark/q10.sql")
	if err != nil {
		t.Fatal(err)
	}
	sql := string(text)
	sql = strings.ReplaceAll(sql, "'10000000'", fmt.Sprintf("'%d'", rate))
	sql = strings.Replace(sql, fmt.Sprintf("'events.num' = '%d'", rate), fmt.Sprintf("'events.num' = '%d'", events), 1)
	const suitePath = "'file:///tmp/nexmark/data/output/q10/bid/'"
	if !strings.Contains(sql, suitePath) {
		t.Fatalf("q10.sql has no path %s", suitePath)
	}
	dir := filepath.Join(t.TempDir(), "bid")
	sql = strings.Replace(sql, suitePath, "'file://"+dir+"/'", 1)
	runNexmarkQuery(t, "SET 'execution.checkpointing.interval' = '50 ms';\n"+sql)

	var want, wantDirs []string
	for _, b := range readNexmark(t, "bid", events, rate) {
		ts := time.UnixMilli(b.t).UTC()
		d := "dt=" + ts.Format("2006-01-02") + "/hm=" + strings.ReplaceAll(ts.Format("15:04"), ":", "%3A")
		want = append(want, fmt.Sprintf("%s %d,%d,%d,%s,%s", d, b.i["auction"], b.i["bidder"], b.i["price"], ts.Format("2006-01-02 15:04:05.000"), b.s["extra"]))
		if !slices.Contains(wantDirs, d) {
			wantDirs = append(wantDirs, d)
		}
	}
	slices.Sort(want)
	slices.Sort(wantDirs)
	if len(wantDirs) < 10 {
		t.Fatalf("the reference has %d partitions; the test data is too small", len(wantDirs))
	}
	if got := partitionRows(dir, ""); !slices.Equal(got, want) {
		t.Errorf("q10: %d rows, the reference %d\n%s", len(got), len(want), diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
	if got := successDirs(dir); !slices.Equal(got, wantDirs) {
		t.Errorf("q10: committed partitions %v, want %v", got, wantDirs)
	}
}
