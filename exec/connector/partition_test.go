package connector

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// tree lists what a reader sees under dir: every visible file by its path, with its
// content; part files are named part-N by their order of path and content.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Contains("/"+rel, "/.") {
			return nil
		}
		data, _ := os.ReadFile(p)
		if strings.HasPrefix(e.Name(), "part-") {
			rel = filepath.Join(filepath.Dir(rel), "part")
		}
		out = append(out, rel+": "+strings.ReplaceAll(string(data), "\n", "|"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var bids = planner.Schema{
	{Name: "id", Type: planner.TypeBigInt},
	{Name: "dt", Type: planner.TypeString},
	{Name: "hm", Type: planner.TypeString},
}

func partitionedTable(dir string, opts map[string]string) *planner.Table {
	o := map[string]string{"connector": "filesystem", "path": dir, "format": "csv"}
	for k, v := range opts {
		o[k] = v
	}
	tbl := table("bids", bids, o)
	tbl.PartitionKeys = []string{"dt", "hm"}
	return tbl
}

type sinkHarness struct {
	t    *testing.T
	ctx  context.Context
	spec SinkSpec
	now  time.Time
}

func (h *sinkHarness) open() *FileSink {
	h.t.Helper()
	h.spec.Now = func() time.Time { return h.now }
	s, err := OpenSink(h.ctx, h.spec)
	if err != nil {
		h.t.Fatal(err)
	}
	return s.(*FileSink)
}

func (h *sinkHarness) write(s *FileSink, rows string) {
	h.t.Helper()
	rec := recordOf(h.t, h.spec.Mem, h.spec.Schema, rows)
	defer rec.Release()
	if err := s.Process(h.ctx, 0, exec.Batch{Rec: rec}); err != nil {
		h.t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expectTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := tree(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFileSinkPartitionLayout: rows go to key=value directories, the partition
// columns out of the files; NULL and ” go to __DEFAULT_PARTITION__; characters that
// cannot stand in a name are escaped as Flink escapes them; the source reads the
// directories back with the partition columns filled.
func TestFileSinkPartitionLayout(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := partitionedTable(dir, map[string]string{"sink.partition-commit.policy.kind": "success-file"})
	h := &sinkHarness{t: t, ctx: context.Background(), spec: SinkSpec{Table: tbl, Schema: bids, Mem: mem, Location: time.UTC}, now: time.Unix(0, 0)}
	s := h.open()
	h.write(s, `[{"id":1,"dt":"2024-05-06","hm":"07:00"},{"id":2,"dt":"2024-05-06","hm":"07:01"},
		{"id":3,"dt":"2024-05-06","hm":"07:00"},{"id":4,"dt":null,"hm":""},{"id":5,"dt":"a/b=c%d","hm":"x y#é"}]`)
	must(t, s.Finish(h.ctx))
	must(t, s.Close())
	expectTree(t, dir,
		"dt=2024-05-06/hm=07%3A00/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A00/part: 1|3|",
		"dt=2024-05-06/hm=07%3A01/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A01/part: 2|",
		"dt=__DEFAULT_PARTITION__/hm=__DEFAULT_PARTITION__/_SUCCESS: ",
		"dt=__DEFAULT_PARTITION__/hm=__DEFAULT_PARTITION__/part: 4|",
		"dt=a%2Fb%3Dc%25d/hm=x y%23é/_SUCCESS: ",
		"dt=a%2Fb%3Dc%25d/hm=x y%23é/part: 5|",
	)

	// Read back: every row with its partition values; a stray file at the top is not
	// the table's.
	must(t, os.WriteFile(filepath.Join(dir, "stray.csv"), []byte("9\n"), 0o644))
	src, err := OpenSource(h.ctx, SourceSpec{Table: tbl, Mem: mem, Location: time.UTC})
	must(t, err)
	defer src.Close()
	var rows []string
	for {
		b, err := src.Next(h.ctx)
		if err == io.EOF {
			break
		}
		must(t, err)
		for i := 0; i < b.Len(); i++ {
			var cells []string
			for c := range 3 {
				cells = append(cells, format.FormatValue(b.Rec.Column(c), i, time.UTC))
			}
			rows = append(rows, strings.Join(cells, ","))
		}
		b.Release()
	}
	sort.Strings(rows)
	want := "1,2024-05-06,07:00 2,2024-05-06,07:01 3,2024-05-06,07:00 4,null,null 5,a/b=c%d,x y#é"
	if got := strings.Join(rows, " "); got != want {
		t.Errorf("read back %s\nwant %s", got, want)
	}
}

// TestFileSinkRollingAndPartitionCommit: files roll by size and by the rollover
// interval, checked every check interval; a rolled file is committed with its
// checkpoint only; a partition is committed (_SUCCESS) by the partition-time trigger
// once the watermark passes its time plus the delay, and after a restore from a
// checkpoint that held it waiting.
func TestFileSinkRollingAndPartitionCommit(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := partitionedTable(dir, map[string]string{
		"sink.rolling-policy.file-size":              "4b",
		"sink.rolling-policy.rollover-interval":      "10 s",
		"sink.rolling-policy.check-interval":         "1 s",
		"sink.partition-commit.trigger":              "partition-time",
		"sink.partition-commit.delay":                "1 min",
		"sink.partition-commit.policy.kind":          "success-file",
		"partition.time-extractor.timestamp-pattern": "$dt $hm:00",
		"sink.partition-commit.watermark-time-zone":  "UTC",
	})
	h := &sinkHarness{t: t, ctx: context.Background(), now: time.Unix(1000, 0),
		spec: SinkSpec{Table: tbl, Schema: bids, Mem: mem, Location: time.UTC, ID: "job-out-0", Checkpointed: true}}
	at := func(s string) int64 {
		ts, err := time.Parse("2006-01-02 15:04:05", s)
		must(t, err)
		return ts.UnixMilli()
	}
	s := h.open()
	// 1 and 22 fill a file of 4 bytes ("1\n22\n" rolls after 22); 3 stays open.
	h.write(s, `[{"id":1,"dt":"2024-05-06","hm":"07:00"},{"id":22,"dt":"2024-05-06","hm":"07:00"},{"id":3,"dt":"2024-05-06","hm":"07:00"}]`)
	if n := len(s.rolled); n != 1 {
		t.Fatalf("%d files rolled by size, want 1", n)
	}
	h.now = h.now.Add(11 * time.Second) // the rollover interval passed
	must(t, s.Flush(h.ctx))
	if n := len(s.rolled); n != 2 {
		t.Fatalf("%d files rolled, want 2 after the rollover interval", n)
	}
	h.write(s, `[{"id":4,"dt":"2024-05-06","hm":"07:01"}]`)
	expectTree(t, dir) // nothing is committed before a checkpoint completes
	must(t, s.ProcessWatermark(h.ctx, at("2024-05-06 07:01:00")))
	_, err := s.Snapshot(h.ctx, 1)
	must(t, err)
	must(t, s.CheckpointComplete(h.ctx, 1))
	expectTree(t, dir,
		"dt=2024-05-06/hm=07%3A00/part: 1|22|",
		"dt=2024-05-06/hm=07%3A00/part: 3|",
		"dt=2024-05-06/hm=07%3A01/part: 4|")
	// 07:00 commits once the watermark passes 07:01 (07:00 + 1 min).
	must(t, s.ProcessWatermark(h.ctx, at("2024-05-06 07:01:00")+1))
	state2, err := s.Snapshot(h.ctx, 2)
	must(t, err)
	must(t, s.CheckpointComplete(h.ctx, 2))
	expectTree(t, dir,
		"dt=2024-05-06/hm=07%3A00/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A00/part: 1|22|",
		"dt=2024-05-06/hm=07%3A00/part: 3|",
		"dt=2024-05-06/hm=07%3A01/part: 4|")
	h.write(s, `[{"id":5,"dt":"2024-05-06","hm":"07:02"}]`)
	_, err = s.Snapshot(h.ctx, 3)
	must(t, err)
	must(t, s.Close()) // dies before checkpoint 3 completes

	// Restored from checkpoint 2: 5 is gone, 07:01 is still waiting; the input ends,
	// and the final checkpoint commits every partition.
	s = h.open()
	must(t, s.Restore(state2))
	if len(s.waiting) != 1 {
		t.Fatalf("waiting partitions %v, want 07:01", s.waiting)
	}
	h.write(s, `[{"id":6,"dt":"2024-05-06","hm":"07:02"}]`)
	must(t, s.Finish(h.ctx))
	_, err = s.Snapshot(h.ctx, 3)
	must(t, err)
	must(t, s.CheckpointComplete(h.ctx, 3))
	must(t, s.Close())
	expectTree(t, dir,
		"dt=2024-05-06/hm=07%3A00/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A00/part: 1|22|",
		"dt=2024-05-06/hm=07%3A00/part: 3|",
		"dt=2024-05-06/hm=07%3A01/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A01/part: 4|",
		"dt=2024-05-06/hm=07%3A02/_SUCCESS: ",
		"dt=2024-05-06/hm=07%3A02/part: 6|")
}

// TestFileSinkProcessTimeCommit: with the process-time trigger a partition commits
// once the delay passed since its first files were committed.
func TestFileSinkProcessTimeCommit(t *testing.T) {
	mem := checkedMem(t)
	dir := t.TempDir()
	tbl := partitionedTable(dir, map[string]string{
		"sink.partition-commit.delay":             "1 min",
		"sink.partition-commit.policy.kind":       "success-file",
		"sink.partition-commit.success-file.name": "_DONE",
	})
	h := &sinkHarness{t: t, ctx: context.Background(), now: time.Unix(1000, 0),
		spec: SinkSpec{Table: tbl, Schema: bids, Mem: mem, Location: time.UTC, ID: "job-out-0", Checkpointed: true}}
	s := h.open()
	defer s.Close()
	h.write(s, `[{"id":1,"dt":"d","hm":"h"}]`)
	for id, advance := range []time.Duration{0, 59 * time.Second, time.Second} {
		h.now = h.now.Add(advance)
		_, err := s.Snapshot(h.ctx, int64(id+1))
		must(t, err)
		must(t, s.CheckpointComplete(h.ctx, int64(id+1)))
		_, err = os.Stat(filepath.Join(dir, "dt=d", "hm=h", "_DONE"))
		if committed := err == nil; committed != (id == 2) {
			t.Errorf("after checkpoint %d: committed %v", id+1, committed)
		}
	}
}

// TestFileSinkPartitionOptionErrors: bad values and the metastore policy are refused
// with one clear line.
func TestFileSinkPartitionOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"sink.partition-commit.policy.kind": "metastore"},
			"sink.partition-commit.policy.kind 'metastore' needs a Hive metastore, which streamsql does not have; use 'success-file'"},
		{map[string]string{"sink.partition-commit.trigger": "event-time"},
			`option 'sink.partition-commit.trigger' must be 'process-time' or 'partition-time', got "event-time"`},
		{map[string]string{"sink.rolling-policy.file-size": "12 parsecs"},
			`option 'sink.rolling-policy.file-size' must be a positive memory size such as '128MB', got "12 parsecs"`},
		{map[string]string{"sink.rolling-policy.check-interval": "0 s"},
			`option 'sink.rolling-policy.check-interval' must be a positive duration`},
		{map[string]string{"sink.partition-commit.watermark-time-zone": "Mars/Olympus"},
			`option 'sink.partition-commit.watermark-time-zone': unknown time zone "Mars/Olympus"`},
	} {
		tbl := partitionedTable(t.TempDir(), c.opts)
		_, err := OpenSink(context.Background(), SinkSpec{Table: tbl, Schema: bids})
		if want := "table bids: " + c.want; err == nil || err.Error() != want {
			t.Errorf("%v: got %v\nwant %s", c.opts, err, want)
		}
	}
	tbl := partitionedTable(t.TempDir(), nil)
	tbl.Options["connector"] = "print"
	if _, err := OpenSink(context.Background(), SinkSpec{Table: tbl, Schema: bids}); err == nil ||
		err.Error() != "table bids: connector 'print' does not support PARTITIONED BY; only the filesystem connector writes partitions" {
		t.Errorf("print: %v", err)
	}
}

func TestParseMemorySize(t *testing.T) {
	for in, want := range map[string]int64{"128MB": 128 << 20, "1 kb": 1024, "7": 7, "2g": 2 << 30, "3 bytes": 3} {
		if got, err := ParseMemorySize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "1 xb", "99999999999999999999"} {
		if _, err := ParseMemorySize(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
