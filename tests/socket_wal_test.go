package tests

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lineServer sends total lines "k,1" (k cycling over keys), paced, each line once over
// all connections: a client that reconnects gets the lines after those already sent,
// as from a real feed. When all are sent it closes the connection.
type lineServer struct {
	ln    net.Listener
	total int
	keys  int
	mu    sync.Mutex
	sent  int
	wg    sync.WaitGroup
}

func startLineServer(t *testing.T, total, keys int) *lineServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &lineServer{ln: ln, total: total, keys: keys}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				for {
					s.mu.Lock()
					from := s.sent
					to := min(from+50, s.total)
					var chunk []byte
					for i := from; i < to; i++ {
						chunk = fmt.Appendf(chunk, "k%d,1\n", i%s.keys)
					}
					if _, err := c.Write(chunk); err != nil {
						s.mu.Unlock()
						return // what was not written goes to the next connection
					}
					s.sent = to
					s.mu.Unlock()
					if to == s.total {
						return
					}
					time.Sleep(10 * time.Millisecond) // about 5000 lines/s
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// TestSocketWALCrash: with 'source.wal' = 'true', a socket job killed again and again
// loses none of what it received. What the kernel took from the server but the killed
// process never read is lost, as with any TCP feed: the server writes a chunk of 50
// lines (one per key) every 10 ms, so a kill may lose the chunks waiting in the kernel,
// one usually, two when the process was starting or syncing the log; the test allows
// two a kill. (Without the log, each kill loses everything received since the last
// checkpoint, about ten chunks.)
func TestSocketWALCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	const total, keys = 20000, 50
	srv := startLineServer(t, total, keys)
	_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE feed (k STRING, n BIGINT) WITH (
  'connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '%s', 'format' = 'csv', 'source.wal' = 'true');
SELECT k, COUNT(*) AS c, SUM(n) AS s FROM feed GROUP BY k;
`, port))
	const kills = 10
	got := parseCounts(t, runUntilDone(t, script, t.TempDir(), kills, rand.New(rand.NewPCG(13, 3))))
	if len(got) != keys {
		t.Fatalf("%d keys, want %d", len(got), keys)
	}
	for k, cs := range got {
		if cs[0] > total/keys || cs[0] < total/keys-2*kills || cs[1] != cs[0] {
			t.Errorf("key %s: count,sum %v, want from %d to %d", k, cs, total/keys-2*kills, total/keys)
		}
	}
}

// TestSocketJobStartSaysAtMostOnce: a checkpointed job over a plain socket says at its
// start that it is at-most-once; with the write-ahead log it does not.
func TestSocketJobStartSaysAtMostOnce(t *testing.T) {
	for _, wal := range []bool{false, true} {
		srv := startLineServer(t, 10, 2)
		_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
		_, stderr, code := runCLI(t, "", "--state-dir", t.TempDir(), "--format", "csv", "-e", fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '1 s';
CREATE TABLE feed (k STRING, n BIGINT) WITH ('connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '%s',
  'format' = 'csv', 'source.wal' = '%v');
SELECT k, COUNT(*) AS c FROM feed GROUP BY k;`, port, wal))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if said := strings.Contains(stderr, "table feed cannot replay what it delivered"); said == wal {
			t.Errorf("with 'source.wal' = '%v' the job start says: %q", wal, stderr)
		}
	}
}

// TestSocketWALDamaged: a byte of the write-ahead log flipped after a kill is found on
// restore: the job fails at once naming the log, and replays nothing of it.
func TestSocketWALDamaged(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	srv := startLineServer(t, 20000, 50)
	_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
CREATE TABLE feed (k STRING, n BIGINT) WITH (
  'connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '%s', 'format' = 'csv', 'source.wal' = 'true');
SELECT k, COUNT(*) AS c, SUM(n) AS s FROM feed GROUP BY k;
`, port))
	state := t.TempDir()
	start(t, "-f", script, "--state-dir", state).kill(t, 800*time.Millisecond)
	logs, _ := filepath.Glob(filepath.Join(state, "select-1", "sources", "*", "wal-*"))
	if len(logs) != 1 {
		t.Fatalf("write-ahead logs: %v", logs)
	}
	data, _ := os.ReadFile(logs[0])
	data[len(data)/2] ^= 0x04
	os.WriteFile(logs[0], data, 0o600)
	began := time.Now()
	_, errOut, code := runCLI(t, "", "-f", script, "--state-dir", state, "--format", "csv")
	if code == 0 || !strings.Contains(errOut, "write-ahead log") || !strings.Contains(errOut, "is damaged") || time.Since(began) > 5*time.Second {
		t.Errorf("exit %d after %v:\n%s", code, time.Since(began), errOut)
	}
}

// TestSocketGracefulStop: a socket job without its write-ahead log, stopped by SIGTERM
// again and again and started again, loses nothing it received: the final checkpoint
// holds all it read. A stop takes what the kernel holds and closes the connection, so
// only what the server writes as the connection closes is lost, a chunk a stop, however
// long the final checkpoint takes (as with any TCP feed; the test allows two); a kill
// would lose everything since the last checkpoint, about ten chunks.
func TestSocketGracefulStop(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: runs without -short")
	}
	const total, keys, stops = 20000, 50, 5
	srv := startLineServer(t, total, keys)
	_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	script := writeScript(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '1 min';
CREATE TABLE feed (k STRING, n BIGINT) WITH (
  'connector' = 'socket', 'hostname' = '127.0.0.1', 'port' = '%s', 'format' = 'csv');
SELECT k, COUNT(*) AS c, SUM(n) AS s FROM feed GROUP BY k;
`, port))
	state := t.TempDir()
	for i := 0; i < stops; i++ {
		p := start(t, "-f", script, "--state-dir", state, "--format", "csv")
		time.Sleep(time.Duration(400+100*i) * time.Millisecond)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(); code != 0 {
			t.Fatalf("stop %d: exit %d\n%s", i, code, p.errOut)
		}
	}
	got := parseCounts(t, runUntilDone(t, script, state, 0, nil))
	if len(got) != keys {
		t.Fatalf("%d keys, want %d", len(got), keys)
	}
	for k, cs := range got {
		if cs[0] > total/keys || cs[0] < total/keys-2*stops || cs[1] != cs[0] {
			t.Errorf("key %s: count,sum %v, want from %d to %d", k, cs, total/keys-2*stops, total/keys)
		}
	}
}
