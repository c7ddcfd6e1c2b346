package streamsql

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFinalCheckpointCommits: a bounded job whose only checkpoint is its final one
// commits the transactional sink's output through it, every time, before the job ends.
func TestFinalCheckpointCommits(t *testing.T) {
	for i := 0; i < 5; i++ {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		s, err := NewSession(Config{Out: io.Discard, Err: io.Discard, StateDir: filepath.Join(dir, "state")})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Exec(context.Background(), `
SET 'execution.checkpointing.interval' = '1 h';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000');
CREATE TABLE files (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '`+out+`', 'format' = 'csv');
INSERT INTO files SELECT id FROM gen;`)
		if err == nil {
			err = s.Wait()
		}
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(out)
		var rows int
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("run %d left %s uncommitted", i, e.Name())
				continue
			}
			data, _ := os.ReadFile(filepath.Join(out, e.Name()))
			rows += strings.Count(string(data), "\n")
		}
		if rows != 1000 {
			t.Fatalf("run %d: %d rows committed, want 1000", i, rows)
		}
	}
}
