package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestPartitionedFileSinkCrash: a partitioned filesystem sink with the partition-time
// commit trigger, small rolling files and success files, at parallelism 2, killed 10
// times: the committed files hold the rows of a failure-free run, each in the same
// partition directory, and every partition has its _SUCCESS. A reader sampling the
// directories during the run never sees a row twice or one that is later rolled back,
// and a partition that shows its _SUCCESS already holds all its rows.
func TestPartitionedFileSinkCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	run := func(kills int, r *rand.Rand) (rows, success []string) {
		dir := filepath.Join(t.TempDir(), "out")
		script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'parallelism.default' = '2';
SET 'table.local-time-zone' = 'UTC';
CREATE TABLE gen (id BIGINT, k BIGINT,
  ts AS TO_TIMESTAMP_LTZ(id * 100, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'datagen', 'number-of-rows' = '30000', 'rows-per-second' = '5000', 'seed' = '31',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '30000',
  'fields.k.min' = '1', 'fields.k.max' = '3');
CREATE TABLE out (id BIGINT, dt STRING, hm STRING, k BIGINT) PARTITIONED BY (dt, hm) WITH (
  'connector' = 'filesystem', 'path' = '%s', 'format' = 'csv',
  'sink.rolling-policy.file-size' = '2kb',
  'sink.partition-commit.trigger' = 'partition-time',
  'sink.partition-commit.delay' = '1 min',
  'sink.partition-commit.policy.kind' = 'success-file',
  'partition.time-extractor.timestamp-pattern' = '$dt $hm:00');
INSERT INTO out SELECT id, DATE_FORMAT(ts, 'yyyy-MM-dd'), DATE_FORMAT(ts, 'HH:mm'), k FROM gen;
`, dir))
		type sample struct {
			rows     []string
			complete map[string][]string // partitions with _SUCCESS: their rows
		}
		var samples []sample
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(25 * time.Millisecond):
					s := sample{complete: map[string][]string{}}
					for _, d := range successDirs(dir) {
						s.complete[d] = partitionRows(filepath.Join(dir, d), d)
					}
					s.rows = partitionRows(dir, "")
					samples = append(samples, s)
				}
			}
		}()
		runUntilDone(t, script, t.TempDir(), kills, r)
		close(stop)
		sampler.Wait()
		rows, success = partitionRows(dir, ""), successDirs(dir)
		final := map[string]bool{}
		byDir := map[string][]string{}
		for _, row := range rows {
			final[row] = true
			d, _, _ := strings.Cut(row, " ")
			byDir[d] = append(byDir[d], row)
		}
		for i, s := range samples {
			seen := map[string]bool{}
			for _, row := range s.rows {
				if seen[row] || !final[row] {
					t.Fatalf("sample %d shows %q, twice or not in the final output", i, row)
				}
				seen[row] = true
			}
			for d, got := range s.complete {
				if strings.Join(got, "\n") != strings.Join(byDir[d], "\n") {
					t.Fatalf("sample %d: partition %s has its _SUCCESS with %d rows, but ends with %d", i, d, len(got), len(byDir[d]))
				}
			}
		}
		return rows, success
	}
	want, wantSuccess := run(0, nil)
	if len(want) != 30000 || len(wantSuccess) != 51 {
		t.Fatalf("failure-free run wrote %d rows in %d committed partitions", len(want), len(wantSuccess))
	}
	got, gotSuccess := run(10, rand.New(rand.NewPCG(33, 5)))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after crashes: %d rows, want %d\n%s", len(got), len(want), diffLines(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
	if strings.Join(gotSuccess, " ") != strings.Join(wantSuccess, " ") {
		t.Errorf("after crashes the committed partitions are %v, want %v", gotSuccess, wantSuccess)
	}
}

// partitionRows reads the rows of the visible part files under root, each prefixed
// with its directory relative to root and the prefix, sorted.
func partitionRows(root, prefix string) []string {
	var rows []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil // renamed meanwhile
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		d := filepath.ToSlash(filepath.Join(prefix, rel))
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			rows = append(rows, d+" "+line)
		}
		return nil
	})
	sort.Strings(rows)
	return rows
}

// successDirs lists the directories under root that hold a _SUCCESS file, sorted.
func successDirs(root string) []string {
	var dirs []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == "_SUCCESS" {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(dirs)
	return dirs
}
