package connector

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
)

// serve accepts one connection on a fresh listener and hands it to talk.
func serve(t *testing.T, talk func(c net.Conn)) (host, port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		talk(c)
	}()
	host, port, _ = net.SplitHostPort(ln.Addr().String())
	return host, port
}

func socketTable(host, port string, extra ...string) map[string]string {
	opts := map[string]string{"connector": "socket", "hostname": host, "port": port, "format": "csv"}
	for i := 0; i+1 < len(extra); i += 2 {
		opts[extra[i]] = extra[i+1]
	}
	return opts
}

func TestSocketSourceReadsUntilServerCloses(t *testing.T) {
	mem := checkedMem(t)
	host, port := serve(t, func(c net.Conn) {
		c.Write([]byte("sensor_1,35.8,3\nsens"))
		time.Sleep(30 * time.Millisecond) // a record split across reads
		c.Write([]byte("or_2,1,1\r\nlast,0,0"))
	})
	r := openSource(t, mem, table("sensors", sensors, socketTable(host, port)), 1024)
	defer r.Close()
	rows, _, err := drain(t, r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I[sensor_1, 35.8, 3]\n+I[sensor_2, 1.0, 1]\n+I[last, 0.0, 0]\n"; rows != want {
		t.Errorf("rows:\n%s\nwant:\n%s", rows, want)
	}
}

func TestSocketSourceJSONWithDelimiter(t *testing.T) {
	mem := checkedMem(t)
	host, port := serve(t, func(c net.Conn) {
		c.Write([]byte(`{"id":"a","cnt":1};{"id":"b","cnt":2};`))
	})
	r := openSource(t, mem, table("sensors", sensors, socketTable(host, port, "format", "json", "byte-delimiter", "59")), 1)
	defer r.Close()
	rows, batches, err := drain(t, r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I[a, null, 1]\n+I[b, null, 2]\n"; rows != want || batches != 2 {
		t.Errorf("rows (%d batches):\n%s\nwant:\n%s", batches, rows, want)
	}
}

func TestSocketSourceBadRecordAndSkip(t *testing.T) {
	mem := checkedMem(t)
	host, port := serve(t, func(c net.Conn) { c.Write([]byte("a,1,1\nb,oops,2\nc,3,3\n")) })
	r := openSource(t, mem, table("sensors", sensors, socketTable(host, port)), 1024)
	_, _, err := drain(t, r, 1000)
	r.Close()
	want := "table sensors: socket " + net.JoinHostPort(host, port) + `: line 2: cannot parse "oops" as DOUBLE for column temperature: "b,oops,2"`
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}

	host, port = serve(t, func(c net.Conn) { c.Write([]byte("a,1,1\nb,oops,2\nc,3,3\n")) })
	r = openSource(t, mem, table("sensors", sensors, socketTable(host, port, "csv.ignore-parse-errors", "true")), 1024)
	defer r.Close()
	rows, _, err := drain(t, r, 1000)
	if err != nil || rows != "+I[a, 1.0, 1]\n+I[c, 3.0, 3]\n" {
		t.Errorf("rows %q, %v", rows, err)
	}
	if n := r.(*SocketReader).Skipped(); n != 1 {
		t.Errorf("skipped %d", n)
	}
}

func TestSocketSourceIdleAndClose(t *testing.T) {
	mem := checkedMem(t)
	release := make(chan struct{})
	host, port := serve(t, func(c net.Conn) {
		c.Write([]byte("a,1,1\n"))
		<-release // keep the connection open until the test ends
	})
	defer close(release)
	r := openSource(t, mem, table("sensors", sensors, socketTable(host, port)), 1024)
	ctx := context.Background()
	got := 0
	deadline := time.Now().Add(5 * time.Second)
	for got == 0 && time.Now().Before(deadline) {
		b, err := r.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got += b.Len()
		b.Release()
	}
	if got != 1 {
		t.Fatalf("%d rows", got)
	}
	start := time.Now()
	b, err := r.Next(ctx)
	if err != nil || b.Rec != nil {
		t.Fatalf("idle: %v %v", b.Rec, err)
	}
	if el := time.Since(start); el < 40*time.Millisecond || el > time.Second {
		t.Errorf("idle poll took %v", el)
	}
	done := make(chan error)
	go func() { done <- r.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the reading goroutine")
	}
	if _, err := r.Next(ctx); err == nil {
		t.Error("Next after Close succeeded")
	}
}

// TestSocketSourceStop: Stop closes the connection at once, and Next then returns all
// that was received before it, however much waits in the reader, and io.EOF.
func TestSocketSourceStop(t *testing.T) {
	mem := checkedMem(t)
	const chunks, lines = 8, 100
	sent, refused := make(chan struct{}), make(chan error, 1)
	host, port := serve(t, func(c net.Conn) {
		for i := range chunks {
			var b []byte
			for j := range lines {
				b = fmt.Appendf(b, "s%d,%d,1\n", i, j)
			}
			c.Write(b)
			time.Sleep(10 * time.Millisecond) // each chunk a read of its own
		}
		close(sent)
		for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(5 * time.Millisecond) {
			if _, err := c.Write([]byte("after,0,0\n")); err != nil {
				refused <- err
				return
			}
		}
		refused <- nil
	})
	r := openSource(t, mem, table("sensors", sensors, socketTable(host, port)), 1024)
	defer r.Close()
	b, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := b.Len()
	b.Release()
	<-sent
	time.Sleep(50 * time.Millisecond) // the reading goroutine fills its queue
	r.(exec.Stopper).Stop()
	rows, _, err := drain(t, r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	got += strings.Count(rows, "+I[s")
	if got != chunks*lines {
		t.Errorf("%d rows after Stop, want the %d sent before it", got, chunks*lines)
	}
	if err := <-refused; err == nil {
		t.Error("the connection stayed open after Stop")
	}
}

func TestSocketSourceConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	_, err = OpenSource(context.Background(), SourceSpec{Table: table("sensors", sensors, socketTable("127.0.0.1", port))})
	if err == nil || !strings.HasPrefix(err.Error(), "table sensors: cannot connect to 127.0.0.1:"+port+": ") {
		t.Errorf("error: %v", err)
	}
}

// TestSocketWriteAheadLog: what a source received after its checkpoint is replayed
// from the log by its replacement, before what the new connection brings, and the log
// is rewritten once a completed checkpoint makes enough of it unneeded.
func TestSocketWriteAheadLog(t *testing.T) {
	mem := checkedMem(t)
	ctx := context.Background()
	stateDir := t.TempDir()
	open := func(lines string) *SocketReader {
		host, port := serve(t, func(c net.Conn) {
			c.Write([]byte(lines))
			time.Sleep(time.Second) // keep the connection open
		})
		r, err := OpenSource(ctx, SourceSpec{Table: table("sensors", sensors, socketTable(host, port, "source.wal", "true")),
			Mem: mem, Location: time.UTC, BatchSize: 2, StateDir: stateDir})
		if err != nil {
			t.Fatal(err)
		}
		return r.(*SocketReader)
	}
	next := func(r *SocketReader) string {
		t.Helper()
		for {
			b, err := r.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if b.Rec != nil {
				defer b.Release()
				var names []string
				for i := 0; i < b.Len(); i++ {
					names = append(names, b.Rec.Column(0).(interface{ Value(int) string }).Value(i))
				}
				return strings.Join(names, " ")
			}
		}
	}
	r := open("a,1,1\nb,1,1\nc,1,1\nd,1,1\ne,1,1\n")
	if got := next(r); got != "a b" {
		t.Fatalf("first batch %q", got)
	}
	state, err := r.Snapshot(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(r); got != "c d" {
		t.Fatalf("second batch %q", got)
	}
	r.Close() // a crash: c, d and e were received, but only a and b are in checkpoint 1

	r = open("f,1,1\n")
	if err := r.Restore(state); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 4 {
		got = append(got, strings.Fields(next(r))...)
	}
	if strings.Join(got, " ") != "c d e f" {
		t.Fatalf("after restore: %q, want c d e f", got)
	}
	r.log.marks[2] = r.log.end // as if checkpoint 2 had covered everything...
	r.log.base -= compactAfter // ...and the log were long
	if err := r.CheckpointComplete(ctx, 2); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(stateDir, "socket-sensors", "wal-*"))
	if len(files) != 1 || filepath.Base(files[0]) != "wal-"+strconv.FormatInt(r.log.end, 10) {
		t.Errorf("log files after compaction: %v (end %d)", files, r.log.end)
	}
	r.Close()

	// Without checkpoints the log has no use.
	host, port := serve(t, func(net.Conn) {})
	_, err = OpenSource(ctx, SourceSpec{Table: table("sensors", sensors, socketTable(host, port, "source.wal", "true")), Mem: mem})
	if err == nil || !strings.Contains(err.Error(), "'source.wal' needs checkpoints") {
		t.Errorf("without a state dir: %v", err)
	}
}

// TestWALFrames: a flipped byte in the log is damage, reported; a last frame cut short
// by a crash is dropped.
func TestWALFrames(t *testing.T) {
	file := append(frame([]byte("a,1,1\n")), frame([]byte("b,1,1\n"))...)
	payload, whole, err := unframe("wal-0", file)
	if err != nil || string(payload) != "a,1,1\nb,1,1\n" || whole != len(file) {
		t.Fatalf("%q %d %v", payload, whole, err)
	}
	torn := append(append([]byte(nil), file...), frame([]byte("c,1,1\n"))[:5]...)
	if payload, whole, err = unframe("wal-0", torn); err != nil || string(payload) != "a,1,1\nb,1,1\n" || whole != len(file) {
		t.Errorf("cut short: %q %d %v", payload, whole, err)
	}
	damaged := append([]byte(nil), file...)
	damaged[len(damaged)-2] ^= 1
	if _, _, err := unframe("wal-0", damaged); err == nil || !strings.Contains(err.Error(), "wal-0 is damaged") {
		t.Errorf("damaged: %v", err)
	}
}

// FuzzWALFrames decodes log files, intact, cut short or damaged: never a panic, and
// the bytes decoded are those of whole frames.
func FuzzWALFrames(f *testing.F) {
	f.Add(append(frame([]byte("a,1,1\n")), frame([]byte("b,1,1\n"))...))
	f.Add(frame(nil))
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, file []byte) {
		payload, whole, err := unframe("wal-0", file)
		if err == nil && (whole > len(file) || len(payload) > whole) {
			t.Fatalf("%d payload bytes from %d whole of %d", len(payload), whole, len(file))
		}
	})
}
