package tests

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql"
)

// TestStateIsPrivateAndHoldsNoSecrets: a checkpointed job's state directory (job
// metadata, checkpoints, keyed state, an embedded table) is made of 0700 directories and
// 0600 files whatever the umask, and neither its files nor the error of an edited
// script hold a secret option value of its tables (here Kafka client properties, which
// are passed through).
func TestStateIsPrivateAndHoldsNoSecrets(t *testing.T) {
	addr := kafkaCluster(t, 1, "in")
	kafkaProduce(t, addr, "in", []string{"1,a", "2,b", "1,c"})
	dir := t.TempDir()
	script := func(secret string) string {
		return `SET 'execution.checkpointing.interval' = '100 ms';
SET 'pipeline.name' = 'private';
CREATE TABLE k (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'in',
  'properties.bootstrap.servers' = '` + addr + `', 'format' = 'csv',
  'properties.sasl.jaas.config' = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `";',
  'properties.ssl.truststore.password' = '` + secret + `',
  'scan.startup.mode' = 'earliest-offset');
CREATE TABLE counts (id INT, n BIGINT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'embedded');
INSERT INTO counts SELECT id, COUNT(*) FROM k GROUP BY id;`
	}
	// run runs the script until its job has completed a checkpoint, then stops it
	// gracefully: its checkpoints stay for the next run.
	run := func(sql string) (string, error) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		var out lockedBuffer // the job writes its notices while the test reads
		s, err := streamsql.NewSession(streamsql.Config{Out: &out, Err: &out, Format: "csv", Mem: mem, Location: time.UTC, StateDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Exec(context.Background(), sql); err != nil {
			return out.String(), err
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if err := s.JobErrors(); err != nil {
				return out.String(), err
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "private", "checkpoints", "chk-*", "_metadata")); len(m) > 0 {
				break
			}
		}
		s.StopJobs()
		return out.String(), s.Wait()
	}
	// A permissive umask: the modes must come from the engine.
	old := umask(0)
	defer umask(old)
	if out, err := run(script("hunter2")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "private", "checkpoints", "chk-*", "_metadata")); len(m) == 0 {
		t.Fatal("no checkpoint completed")
	}
	files := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		info, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if path != dir && info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
		}
		if !d.IsDir() && info.Mode().IsRegular() {
			files++
			if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte("hunter2")) {
				t.Errorf("%s holds the secret", path)
			}
		}
		return nil
	})
	if files == 0 {
		t.Fatal("the job wrote no state")
	}
	// The same job with another password: its fingerprint differs, and the error says
	// how without showing either value.
	out, err := run(script("swordfish"))
	if err == nil {
		t.Fatalf("an edited script restored silently:\n%s", out)
	}
	if !strings.Contains(err.Error(), "different query or table options") {
		t.Errorf("edited script: %v", err)
	}
	if msg := err.Error() + out; strings.Contains(msg, "hunter2") || strings.Contains(msg, "swordfish") {
		t.Errorf("the error shows a secret: %s", msg)
	}
}
