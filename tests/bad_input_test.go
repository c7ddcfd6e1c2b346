package tests

import (
	"bytes"
	"context"
	"io/fs"
	"net"
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

// TestLogsAndSpoolsArePrivate: a running job's socket write-ahead log and Kafka
// transaction spool are 0600 files in 0700 directories whatever the umask, as the rest
// of its state.
func TestLogsAndSpoolsArePrivate(t *testing.T) {
	addr := kafkaCluster(t, 1, "out")
	srv := startLineServer(t, 1_000_000, 10)
	_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	dir := t.TempDir()
	old := umask(0)
	defer umask(old)
	var out lockedBuffer
	s, err := streamsql.NewSession(streamsql.Config{Out: &out, Err: &out, Format: "csv", Location: time.UTC, StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Exec(context.Background(), `SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE feed (k STRING, n BIGINT) WITH ('connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '`+port+`',
  'format' = 'csv', 'source.wal' = 'true');
CREATE TABLE sink (k STRING, n BIGINT) WITH ('connector' = 'kafka', 'topic' = 'out', 'format' = 'csv',
  'properties.bootstrap.servers' = '`+addr+`', 'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'private');
INSERT INTO sink SELECT k, n FROM feed;`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.StopJobs(); s.Wait() }()
	var logs, spools []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && (len(logs) == 0 || len(spools) == 0); time.Sleep(20 * time.Millisecond) {
		if err := s.JobErrors(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		logs, spools = nil, nil
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a spool file may go as the walk reaches it
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if path != dir && info.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
			}
			switch rel, _ := filepath.Rel(dir, path); {
			case strings.HasPrefix(d.Name(), "wal-") && !d.IsDir():
				logs = append(logs, rel)
			case strings.Contains(rel, "sinks") && !d.IsDir():
				spools = append(spools, rel)
			}
			return nil
		})
	}
	if len(logs) == 0 || len(spools) == 0 {
		files := []string{}
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			files = append(files, path)
			return nil
		})
		t.Fatalf("write-ahead logs %v, spools %v among %v", logs, spools, files)
	}
}
