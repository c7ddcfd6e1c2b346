package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
)

const (
	socketChunk       = 64 << 10
	socketDialTimeout = 10 * time.Second
)

// SocketReader is the socket source of Flink's examples: a TCP client of
// hostname:port that splits what it receives on 'byte-delimiter' (default 10, a line
// feed) and decodes each record with the table's format. It is unbounded and ends
// (io.EOF) when the server closes the connection. It never runs in parallel. A
// goroutine owned by the reader reads the connection; Close stops it and waits for it.
//
// A server does not send again what it sent, so by itself the source is not
// replayable: after a restore it reads what arrives from then on (at-most-once). With
// 'source.wal' = 'true' (in a job with checkpoints) it logs every chunk it receives
// durably before decoding it, and a restored source first replays the log from its
// checkpoint's position: nothing received is lost.
type SocketReader struct {
	table string
	addr  string
	conn  net.Conn
	dec   format.Decoder
	delim byte
	batch int

	chunks chan socketChunkMsg
	free   chan []byte
	done   chan struct{}
	wg     sync.WaitGroup

	buf       []byte // received and not yet decoded
	line      int64  // records so far
	header    stateHeader
	walDir    string // where the write-ahead log lives; "" without one
	log       *wal   // opened when reading starts, or by a restore
	bufEnd    int64  // the log offset after buf
	started   bool   // the reading goroutine runs
	eof       bool   // the connection ended
	closeOnce sync.Once
	closed    bool
	stopMu    sync.Mutex
	stopping  bool      // Stop was called: read what the kernel holds, then end
	stopAt    time.Time // when Stop was called
	lines     []int64   // the record number of each row decoded since the last batch
}

type socketChunkMsg struct {
	data []byte
	end  int64 // the log offset after data
	err  error
}

var (
	_ exec.Reader         = (*SocketReader)(nil)
	_ exec.SkipCounter    = (*SocketReader)(nil)
	_ exec.Stopper        = (*SocketReader)(nil)
	_ exec.Snapshotter    = (*SocketReader)(nil)
	_ exec.Restorer       = (*SocketReader)(nil)
	_ exec.CommitListener = (*SocketReader)(nil)
)

func openSocket(ctx context.Context, spec SourceSpec) (*SocketReader, error) {
	t := spec.Table
	sp, err := newSplit(spec)
	if err != nil {
		return nil, err // one connection: never in parallel
	}
	o, err := NewOptions(t, []string{"byte-delimiter", "hostname", "port", "source.wal"}, true, nil)
	if err != nil {
		return nil, err
	}
	withWAL, err := o.Bool("source.wal", false)
	if err != nil {
		return nil, err
	}
	var walDir string
	if withWAL {
		if spec.StateDir == "" {
			return nil, o.Err("option 'source.wal' needs checkpoints ('execution.checkpointing.interval')")
		}
		name, err := FileName(t)
		if err != nil {
			return nil, err
		}
		walDir = filepath.Join(spec.StateDir, "socket-"+name)
	}
	host, err := o.Required("hostname")
	if err != nil {
		return nil, err
	}
	if _, err := o.Required("port"); err != nil {
		return nil, err
	}
	port, err := o.Int64("port", 0, 1, 65535)
	if err != nil {
		return nil, err
	}
	delim := byte('\n')
	if v, ok := t.Option("byte-delimiter"); ok {
		// Flink's option is the byte's value (10); a single non-digit character is
		// taken as itself.
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 && n <= math.MaxUint8 {
			delim = byte(n)
		} else if len(v) == 1 && (v[0] < '0' || v[0] > '9') {
			delim = v[0]
		} else {
			return nil, o.Err("option 'byte-delimiter' must be a byte value from 0 to 255, got %q", v)
		}
	}
	dec, err := format.NewDecoder(o.Format(), t.PhysicalSchema(), spec.Mem, t.Options, spec.Location)
	if err != nil {
		return nil, formatErr(o, err)
	}
	addr := net.JoinHostPort(strings.TrimSpace(host), strconv.FormatInt(port, 10))
	dialer := net.Dialer{Timeout: socketDialTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		dec.Release()
		return nil, fmt.Errorf("table %s: cannot connect to %s: %w", t.Name, addr, err)
	}
	r := &SocketReader{
		table:  t.Name,
		header: newStateHeader("socket", t.Name, sp),
		walDir: walDir,
		addr:   addr,
		conn:   conn,
		dec:    dec,
		delim:  delim,
		batch:  spec.BatchSize,
		chunks: make(chan socketChunkMsg, 4),
		free:   make(chan []byte, 6),
		done:   make(chan struct{}),
	}
	return r, nil
}

// start starts reading the connection, after a restore had its chance to replay the log.
func (r *SocketReader) start() error {
	r.started = true
	if r.walDir != "" && r.log == nil {
		log, err := openWAL(r.walDir)
		if err != nil {
			return fmt.Errorf("table %s: write-ahead log: %w", r.table, err)
		}
		r.log = log
	}
	r.wg.Add(1)
	go r.read()
	return nil
}

// read runs in the reader's goroutine: it reads the connection into chunks until the
// connection fails or ends, or Close is called. With a write-ahead log, a chunk is
// logged as soon as it is read: whatever the process received survives it.
func (r *SocketReader) read() {
	defer r.wg.Done()
	for {
		var b []byte
		select {
		case b = <-r.free:
		default:
			b = make([]byte, socketChunk)
		}
		own, over := r.readDeadline()
		if over {
			r.end(io.EOF)
			return
		}
		n, err := r.conn.Read(b[:cap(b)])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if !own {
				continue // Stop woke the read: read again with a deadline of our own
			}
			err = io.EOF // the kernel holds no more
		}
		if n > 0 {
			var end int64
			if r.log != nil {
				var werr error
				if end, werr = r.log.append(b[:n]); werr != nil {
					n, err = 0, fmt.Errorf("write-ahead log: %w", werr)
				}
			}
			if n > 0 {
				select {
				case r.chunks <- socketChunkMsg{data: b[:n], end: end}:
				case <-r.done:
					return
				}
			}
		}
		if err != nil {
			r.end(err)
			return
		}
	}
}

// end passes on the error that ended reading; a stop's end closes the connection.
func (r *SocketReader) end(err error) {
	if err == io.EOF {
		r.conn.Close()
	}
	select {
	case r.chunks <- socketChunkMsg{err: err}:
	case <-r.done:
	}
}

// Skipped returns how many malformed records were skipped.
func (r *SocketReader) Skipped() int64 { return r.dec.Skipped() }

// Next returns the records received so far, waiting up to a poll interval for some;
// see exec.Reader.
func (r *SocketReader) Next(ctx context.Context) (exec.Batch, error) {
	if r.closed {
		return exec.Batch{}, errClosed
	}
	if !r.started {
		if err := r.start(); err != nil {
			return exec.Batch{}, err
		}
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := r.decode(); err != nil {
			return exec.Batch{}, err
		}
		if r.dec.Rows() >= r.batch {
			break
		}
		if r.eof {
			if len(r.buf) > 0 {
				// The last record lacks a delimiter.
				if err := r.record(r.buf); err != nil {
					return exec.Batch{}, err
				}
				r.buf = r.buf[:0]
			}
			if r.dec.Rows() == 0 {
				return exec.Batch{}, io.EOF
			}
			break
		}
		// Take what has arrived without waiting; wait only when nothing is decoded.
		var msg socketChunkMsg
		select {
		case msg = <-r.chunks:
		default:
			if r.dec.Rows() > 0 {
				return r.flush(), nil
			}
			if timer == nil {
				timer = time.NewTimer(pollInterval)
			}
			select {
			case msg = <-r.chunks:
			case <-timer.C:
				return exec.Batch{}, nil
			case <-ctx.Done():
				return exec.Batch{}, ctx.Err()
			}
		}
		if err := r.receive(msg); err != nil {
			return exec.Batch{}, err
		}
	}
	return r.flush(), nil
}

// Stop ends the input: the reading goroutine takes what the kernel already holds,
// then closes the connection, so that the server sends no more into it; Next returns
// all that was received, then io.EOF.
func (r *SocketReader) Stop() {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	r.stopping, r.stopAt = true, time.Now()
	if !r.started {
		r.eof = true
		r.conn.Close()
		return
	}
	r.conn.SetReadDeadline(r.stopAt) // wakes a waiting read
}

// stopDrainLimit bounds how long a stopping reader goes on taking what a fast server
// keeps sending.
const stopDrainLimit = time.Second

// readDeadline, once Stop was called, gives the next read a millisecond: enough for
// what the kernel holds, not for more to arrive. It reports whether the deadline of
// that read is this one, and whether the drain is over.
func (r *SocketReader) readDeadline() (own, over bool) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if !r.stopping {
		return false, false
	}
	if time.Since(r.stopAt) > stopDrainLimit {
		return false, true
	}
	r.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	return true, false
}

func (r *SocketReader) receive(msg socketChunkMsg) error {
	if msg.err != nil {
		if errors.Is(msg.err, io.EOF) {
			r.eof = true
			return nil
		}
		return fmt.Errorf("table %s: socket %s: %w", r.table, r.addr, msg.err)
	}
	r.buf = append(r.buf, msg.data...)
	r.bufEnd = msg.end
	select {
	case r.free <- msg.data[:0]:
	default:
	}
	return nil
}

// decode decodes the complete records in buf until the batch is full.
func (r *SocketReader) decode() error {
	start := 0
	for r.dec.Rows() < r.batch {
		n := bytes.IndexByte(r.buf[start:], r.delim)
		if n < 0 {
			break
		}
		if err := r.record(r.buf[start : start+n]); err != nil {
			return err
		}
		start += n + 1
	}
	if start > 0 {
		r.buf = r.buf[:copy(r.buf, r.buf[start:])]
	}
	if len(r.buf) > maxRecordSize {
		return fmt.Errorf("table %s: socket %s: record %d longer than %d bytes", r.table, r.addr, r.line+1, maxRecordSize)
	}
	return nil
}

func (r *SocketReader) record(rec []byte) error {
	r.line++
	before := r.dec.Rows()
	if err := r.dec.Decode(rec, r.line); err != nil {
		return fmt.Errorf("table %s: socket %s: %w", r.table, r.addr, err)
	}
	if before == 0 {
		r.lines = make([]int64, 0, r.batch)
	}
	for range r.dec.Rows() - before {
		r.lines = append(r.lines, r.line)
	}
	return nil
}

// flush returns the rows decoded so far as a batch.
func (r *SocketReader) flush() exec.Batch {
	origin := &exec.LineOrigin{Table: r.table, Where: "socket " + r.addr, Lines: r.lines}
	r.lines = nil // the batch keeps them
	rec := r.dec.Flush()
	return exec.Batch{Rec: rec, Kinds: r.dec.Kinds(), Origin: origin}
}

// Snapshot returns the position in the write-ahead log of the first record not yet
// delivered (Next leaves no decoded record behind); nil without a log.
func (r *SocketReader) Snapshot(_ context.Context, id int64) ([]byte, error) {
	if r.walDir == "" {
		return nil, nil
	}
	if !r.started {
		if err := r.start(); err != nil {
			return nil, err
		}
	}
	offset := r.bufEnd - int64(len(r.buf))
	r.log.mark(id, offset)
	return socketPosition{stateHeader: r.header, Offset: offset, Line: r.line}.encode()
}

// Restore replays the write-ahead log from the snapshot's position before what the
// connection brings.
func (r *SocketReader) Restore(state []byte) error {
	if r.walDir == "" {
		return nil
	}
	var p socketPosition
	if err := decodeState(state, r.header, &p); err != nil {
		return err
	}
	if r.started {
		return r.header.Err("the source already started reading")
	}
	log := &wal{dir: r.walDir, marks: map[int64]int64{}}
	data, err := log.recover(p.Offset)
	if err != nil {
		return r.header.Err("%v", err)
	}
	r.log, r.buf, r.bufEnd, r.line = log, append(r.buf[:0], data...), log.end, p.Line
	return nil
}

// CheckpointComplete lets the log drop what no restore needs any more.
func (r *SocketReader) CheckpointComplete(_ context.Context, id int64) error {
	if r.log == nil {
		return nil
	}
	if err := r.log.complete(id); err != nil {
		return fmt.Errorf("table %s: write-ahead log: %w", r.table, err)
	}
	return nil
}

// Close closes the connection, stops the reading goroutine and waits for it.
func (r *SocketReader) Close() error {
	var err error
	r.closeOnce.Do(func() {
		r.closed = true
		close(r.done)
		if err = r.conn.Close(); errors.Is(err, net.ErrClosed) {
			err = nil // the server or Stop ended the connection
		}
		r.wg.Wait()
		if rec := r.dec.Flush(); rec != nil {
			rec.Release()
		}
		r.dec.Release()
		if r.log != nil {
			r.log.close()
		}
	})
	return err
}
