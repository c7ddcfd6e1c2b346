package connector

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// visible lists the files a reader sees in dir, with their content.
func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out = append(out, string(data))
	}
	sort.Strings(out)
	return out
}

// TestFileSinkTwoPhaseCommit: rows appear only when their checkpoint completes; a
// restored sink commits its checkpoint's pending file even when the completion notice
// was lost, removes what a failed attempt left, and numbers new files after the old.
func TestFileSinkTwoPhaseCommit(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	dir := t.TempDir()
	schema := planner.Schema{{Name: "id", Type: planner.TypeString}}
	tbl := table("out", schema, map[string]string{"connector": "filesystem", "path": dir, "format": "csv"})
	spec := SinkSpec{Table: tbl, Schema: schema, Mem: mem, Location: time.UTC, ID: "job-1-out-0", Checkpointed: true}
	open := func() *FileSink {
		s, err := OpenSink(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return s.(*FileSink)
	}
	write := func(s *FileSink, rows string) {
		rec := recordOf(t, mem, schema, rows)
		defer rec.Release()
		if err := s.Process(ctx, 0, exec.Batch{Rec: rec}); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		if got := visible(t, dir); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("visible files %q, want %q", got, want)
		}
	}

	s := open()
	write(s, `[{"id":"a"}]`)
	state1, err := s.Snapshot(ctx, 1)
	must(err)
	write(s, `[{"id":"b"}]`)
	expect() // checkpoint 1 has not completed
	must(s.CheckpointComplete(ctx, 1))
	expect("a\n")
	_, err = s.Snapshot(ctx, 2) // pre-commits b; then the process dies
	must(err)
	write(s, `[{"id":"c"}]`)
	must(s.Close())

	// Restored from checkpoint 1: b and c were never committed and go away.
	s = open()
	must(s.Restore(state1))
	expect("a\n")
	write(s, `[{"id":"b2"}]`)
	state2, err := s.Snapshot(ctx, 2)
	must(err)
	must(s.Close()) // crashed before checkpoint 2's notice

	// Restored from checkpoint 2, whose metadata was complete: its file is committed
	// by the restore, and committing it twice is harmless.
	s = open()
	must(s.Restore(state2))
	expect("a\n", "b2\n")
	s = open()
	must(s.Restore(state2))
	expect("a\n", "b2\n")
	write(s, `[{"id":"d"}]`)
	must(s.Finish(ctx))
	_, err = s.Snapshot(ctx, 3) // the final checkpoint
	must(err)
	must(s.CheckpointComplete(ctx, 3))
	must(s.Close())
	expect("a\n", "b2\n", "d\n")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("leftovers in %s: %v", dir, entries)
	}

	// A fresh run of the same job numbers its files after the committed ones.
	s = open()
	write(s, `[{"id":"e"}]`)
	_, err = s.Snapshot(ctx, 1)
	must(err)
	must(s.CheckpointComplete(ctx, 1))
	must(s.Close())
	expect("a\n", "b2\n", "d\n", "e\n")
}
