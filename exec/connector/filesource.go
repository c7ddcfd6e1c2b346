package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
)

const (
	readSize      = 1 << 20  // bytes asked of each read
	maxRecordSize = 64 << 20 // a longer record is an error (an unterminated quote, or no line breaks)
)

var errClosed = errors.New("connector: reader is closed")

// FileReader is the filesystem source: it reads the lines of a file, or of every
// regular file of a directory in name order (names starting with '.' or '_' are
// hidden and skipped), and decodes them with the table's format. It is bounded unless
// 'source.monitor-interval' is set: then it keeps listing the directory at that
// interval and reads each new file once. A file must be complete when it appears
// (written elsewhere and moved in, or written under a hidden name and renamed, as the
// filesystem sink does); data appended to a file already read is not seen.
//
// Read once at parallelism above 1, files in the json, raw and csv formats are split by
// byte ranges, as Flink's file source splits files: every task reads every file, each
// the records that start in its share of the bytes, so that one large file keeps every
// task busy. A task finds its share's first record by following the bytes before it
// (format.RecordStarts: in csv a quoted field may hold line breaks). The changelog
// formats' tasks share the files whole (see split).
//
// A snapshot is the files read, the file being read with the offset and line number of
// its next record, and the files listed but not yet read (see fileState).
type FileReader struct {
	table   string
	split   split
	path    string
	dir     bool
	monitor time.Duration // 0: bounded
	format  string
	ranges  bool // files are split by byte ranges
	// starts finds where records start, for a task's range to begin at one; nil in the
	// formats that are not split (see splitsByRanges).
	starts *format.RecordStarts
	// multiline: a record may hold line breaks (csv's quoted fields); the other
	// formats' records end at the first.
	multiline bool
	dec       format.Decoder
	pool      *exec.BufferPool // the decoder's buffers, which come back as batches are released
	part      *partReader      // nil: the table is not partitioned
	batch     int
	now       func() time.Time

	pending  []string        // this task's files listed and not yet read, in order
	resume   []FilePosition  // files begun by other tasks, restored at another parallelism
	done     []string        // this task's files read to their end
	seen     map[string]bool // files listed so far
	lastList time.Time

	f      *os.File
	pos    FilePosition
	limit  int64 // records starting at or past this offset are another task's; -1: none
	buf    []byte
	start  int  // buf[start:end] is read and not yet decoded
	end    int  //
	eof    bool // the current file has no more bytes
	closed bool

	// Where the rows decoded since the last batch were read (exec.Origin).
	where string // the file of the first
	last  string // the file of the latest
	cur   string // "file " + pos.Path, made once a file
	lines []int64
	files []exec.FileRun
	// rowsFrom is the file of the rows decoded since the last batch, of a partitioned
	// table (whose batches hold the rows of one file).
	rowsFrom string
}

// FilePosition is where a FileReader is: the file it reads, the byte offset of the
// next record in it and the number of lines before that record. A position that
// resumes a byte range (see FileReader) may also bound it: End, when positive, is the
// offset from which records are another range's; with Align, Offset is the range's
// first byte rather than a record's, and the line is counted when the file opens.
type FilePosition struct {
	Path   string
	Offset int64
	Line   int64
	End    int64
	Align  bool
}

var (
	_ exec.Reader      = (*FileReader)(nil)
	_ exec.SkipCounter = (*FileReader)(nil)
	_ exec.Snapshotter = (*FileReader)(nil)
	_ exec.Restorer    = (*FileReader)(nil)
)

func openFileSource(spec SourceSpec) (*FileReader, error) {
	t := spec.Table
	sp, err := newSplit(spec)
	if err != nil {
		return nil, err
	}
	o, err := NewOptions(t, fileOptionKeys, true, nil)
	if err != nil {
		return nil, err
	}
	path, err := o.Required("path")
	if err != nil {
		return nil, err
	}
	path = strings.TrimPrefix(path, "file://")
	monitor, err := o.Duration("source.monitor-interval", 0)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, WrapError(t, err)
	}
	part, data, err := newPartReader(o, t, spec.Mem, spec.Location)
	if err != nil {
		return nil, err
	}
	if part != nil && !st.IsDir() {
		return nil, o.Err("the path of a partitioned table must be a directory; %s is a file", path)
	}
	starts, err := format.NewRecordStarts(o.Format(), t.Options)
	if err != nil {
		return nil, formatErr(o, err)
	}
	pool := exec.NewBufferPool(spec.Mem, true)
	dec, err := format.NewDecoder(o.Format(), data, pool, t.Options, spec.Location)
	if err != nil {
		return nil, formatErr(o, err)
	}
	r := &FileReader{
		table:     t.Name,
		split:     sp,
		path:      path,
		dir:       st.IsDir(),
		monitor:   monitor,
		format:    o.Format(),
		starts:    starts,
		multiline: o.Format() == "csv",
		dec:       dec,
		pool:      pool,
		part:      part,
		batch:     spec.BatchSize,
		now:       spec.Now,
		seen:      map[string]bool{},
		buf:       make([]byte, readSize),
	}
	r.ranges = r.splitsByRanges(sp.tasks)
	if err := r.list(); err != nil {
		dec.Release()
		pool.Close()
		return nil, err
	}
	return r, nil
}

// list adds this task's files not seen before to pending (see split for which are
// this task's).
func (r *FileReader) list() error {
	r.lastList = r.now()
	var found []string
	switch {
	case !r.dir:
		found = []string{r.path}
	case r.part != nil:
		var err error
		if found, err = r.part.list(r.path); err != nil {
			return r.err(err)
		}
	default:
		entries, err := os.ReadDir(r.path)
		if err != nil {
			return r.err(err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				continue
			}
			p := filepath.Join(r.path, name)
			if !e.Type().IsRegular() {
				// Follow symbolic links to regular files; skip directories and the rest.
				st, err := os.Stat(p)
				if err != nil || !st.Mode().IsRegular() {
					continue
				}
			}
			found = append(found, p)
		}
	}
	sort.Strings(found)
	for i, p := range found {
		if r.seen[p] {
			continue
		}
		r.seen[p] = true
		if r.owns(i, p) {
			r.pending = append(r.pending, p)
		}
	}
	return nil
}

// splitsByRanges says whether tasks of this source split each file by byte ranges:
// read once, in parallel, in a format whose records can be read in any order (not the
// changelog formats, whose changes must stay in order).
func (r *FileReader) splitsByRanges(tasks int) bool {
	return r.starts != nil && r.monitor == 0 && tasks > 1
}

// rangeOf is the share of a file of size bytes that task of tasks reads: the records
// that start in [lo, hi).
func rangeOf(size int64, task, tasks int) (lo, hi int64) {
	return size * int64(task) / int64(tasks), size * int64(task+1) / int64(tasks)
}

// owns reports whether file i of a sorted listing is this task's: every file when
// files are split by ranges; else by its index when the path is listed once, by its
// name when a monitored directory's indexes shift.
func (r *FileReader) owns(i int, p string) bool {
	if r.ranges {
		return true
	}
	if r.dir && r.monitor > 0 {
		return r.split.ownsName(filepath.Base(p))
	}
	return r.split.ownsIndex(i)
}

func (r *FileReader) err(err error) error {
	return fmt.Errorf("table %s: %w", r.table, err)
}

// Position returns where the reader is in the file it reads.
func (r *FileReader) Position() FilePosition { return r.pos }

// Skipped returns how many malformed records were skipped (with the format's
// ignore-parse-errors option).
func (r *FileReader) Skipped() int64 { return r.dec.Skipped() }

// Next returns the next batch of up to the batch size rows; see exec.Reader.
func (r *FileReader) Next(ctx context.Context) (exec.Batch, error) {
	if r.closed {
		return exec.Batch{}, errClosed
	}
	for r.dec.Rows() < r.batch {
		if err := ctx.Err(); err != nil {
			return exec.Batch{}, err
		}
		if r.f == nil && len(r.resume) > 0 {
			at := r.resume[0]
			r.resume = r.resume[1:]
			if err := r.openAt(at); err != nil {
				return exec.Batch{}, err
			}
		}
		if r.f == nil {
			if len(r.pending) == 0 {
				if r.dec.Rows() > 0 {
					break
				}
				if r.monitor == 0 {
					return exec.Batch{}, io.EOF
				}
				if err := r.poll(ctx); err != nil {
					return exec.Batch{}, err
				}
				if len(r.pending) == 0 {
					return exec.Batch{}, nil
				}
			}
			if err := r.open(); err != nil {
				return exec.Batch{}, err
			}
		}
		if err := r.decode(); err != nil {
			return exec.Batch{}, err
		}
		if r.part != nil && r.f == nil && r.dec.Rows() > 0 {
			break // a batch of a partitioned table holds the rows of one file
		}
	}
	origin := &exec.LineOrigin{Table: r.table, Where: r.where, Lines: r.lines, Files: r.files}
	r.lines, r.files = nil, nil // the batch keeps them
	rec := r.dec.Flush()
	if r.part != nil {
		rel, _ := filepath.Rel(r.path, r.rowsFrom)
		var err error
		if rec, err = r.part.fill(r.table, rel, rec); err != nil {
			return exec.Batch{}, err
		}
	}
	return exec.Batch{Rec: rec, Kinds: r.dec.Kinds(), Origin: origin}, nil
}

// poll lists the directory again once the monitor interval has passed since the last
// listing, waiting at most one poll interval for that.
func (r *FileReader) poll(ctx context.Context) error {
	wait := r.monitor - r.now().Sub(r.lastList)
	if wait > 0 {
		if wait > pollInterval {
			wait = pollInterval
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.now().Sub(r.lastList) < r.monitor {
			return nil
		}
	}
	return r.list()
}

func (r *FileReader) open() error {
	p := r.pending[0]
	r.pending = r.pending[1:]
	return r.openAt(FilePosition{Path: p, Align: r.ranges})
}

// openAt opens a file to read from a position. Split by ranges, a file opened at its
// start (Align) starts at this task's range, and a position without an End ends where
// this task's range does.
func (r *FileReader) openAt(pos FilePosition) error {
	f, err := os.Open(pos.Path)
	if err != nil {
		return r.err(err)
	}
	r.limit = -1
	if pos.End > 0 {
		r.limit = pos.End
	} else if r.ranges {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return r.err(err)
		}
		lo, hi := rangeOf(st.Size(), r.split.task, r.split.tasks)
		if pos.Align {
			pos.Offset = lo
		}
		r.limit = hi
	}
	if pos.Align {
		starts := *r.starts // a copy, at the file's start
		if pos, err = alignToRecord(f, pos.Offset, r.buf, &starts); err != nil {
			f.Close()
			return r.err(err)
		}
		pos.Path = f.Name()
	}
	if pos.Offset > 0 {
		if _, err := f.Seek(pos.Offset, io.SeekStart); err != nil {
			f.Close()
			return r.err(err)
		}
	}
	pos.End, pos.Align = max(r.limit, 0), false // a snapshot keeps the range's end
	r.f = f
	r.pos = pos
	r.cur = "file " + pos.Path
	r.start, r.end, r.eof = 0, 0, false
	return nil
}

// alignToRecord returns the position of the first record that starts at or after
// offset lo of f, with the number of lines before it. starts, new, splits the file's
// bytes into records as the decoder does; it reads through buf, the reader's buffer,
// which holds nothing yet for this file.
func alignToRecord(f *os.File, lo int64, buf []byte, starts *format.RecordStarts) (FilePosition, error) {
	var at, lines int64
	for at < lo {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), lo-at)], at)
		starts.Read(buf[:n], false)
		lines += int64(bytes.Count(buf[:n], newline))
		at += int64(n)
		if err == io.EOF {
			return FilePosition{Offset: at, Line: lines}, nil
		}
		if err != nil {
			return FilePosition{}, err
		}
	}
	if starts.AtStart() {
		return FilePosition{Offset: at, Line: lines}, nil
	}
	for {
		n, err := f.ReadAt(buf, at)
		if i := starts.Read(buf[:n], true); i >= 0 {
			return FilePosition{Offset: at + int64(i), Line: lines + int64(bytes.Count(buf[:i], newline))}, nil
		}
		lines += int64(bytes.Count(buf[:n], newline))
		at += int64(n)
		if err == io.EOF {
			return FilePosition{Offset: at, Line: lines}, nil
		}
		if err != nil {
			return FilePosition{}, err
		}
	}
}

var utf8BOM = []byte("\xef\xbb\xbf")

// decode decodes records of the current file until the batch is full or the file (or
// this task's range of it) ends.
func (r *FileReader) decode() error {
	for r.dec.Rows() < r.batch {
		if r.limit >= 0 && r.pos.Offset >= r.limit {
			return r.closeFile()
		}
		avail := r.buf[r.start:r.end]
		n := r.dec.RecordEnd(avail)
		if n >= 0 {
			if err := r.record(avail[:n], n+1); err != nil {
				return err
			}
			continue
		}
		if !r.eof {
			if err := r.fill(); err != nil {
				return err
			}
			continue
		}
		if len(avail) == 0 {
			return r.closeFile()
		}
		// The last record lacks a line break.
		if err := r.record(avail, len(avail)); err != nil {
			return err
		}
	}
	return nil
}

// record decodes one record that takes consumed bytes of the file.
func (r *FileReader) record(rec []byte, consumed int) error {
	if r.pos.Offset == 0 { // a file may start with a byte-order mark, which is no data
		rec = bytes.TrimPrefix(rec, utf8BOM)
	}
	before := r.dec.Rows()
	if err := r.dec.Decode(rec, r.pos.Line+1); err != nil {
		return fmt.Errorf("table %s: %s: %w", r.table, r.pos.Path, err)
	}
	if after := r.dec.Rows(); after > before { // not skipped
		r.origin(before, after)
		r.rowsFrom = r.pos.Path
	}
	r.pos.Line++
	if r.multiline {
		r.pos.Line += int64(bytes.Count(rec, newline))
	}
	r.pos.Offset += int64(consumed)
	r.start += consumed
	return nil
}

var newline = []byte{'\n'}

// origin records that rows [from, to) of the batch come from the record at the
// reader's position.
func (r *FileReader) origin(from, to int) {
	where := r.cur
	switch {
	case from == 0:
		r.where, r.last = where, where
		if r.lines == nil {
			r.lines = make([]int64, 0, r.batch)
		}
		r.lines, r.files = r.lines[:0], nil
	case where != r.last:
		r.files = append(r.files, exec.FileRun{Row: from, Where: where})
		r.last = where
	}
	for range to - from {
		r.lines = append(r.lines, r.pos.Line+1)
	}
}

// fill reads more of the current file into buf, keeping the undecoded bytes.
func (r *FileReader) fill() error {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		if len(r.buf) >= maxRecordSize {
			return fmt.Errorf("table %s: %s: line %d: record longer than %d bytes", r.table, r.pos.Path, r.pos.Line+1, maxRecordSize)
		}
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
	n, err := r.f.Read(r.buf[r.end:])
	r.end += n
	if err == io.EOF {
		r.eof = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", r.table, err)
	}
	return nil
}

func (r *FileReader) closeFile() error {
	err := r.f.Close()
	r.f = nil
	r.done = append(r.done, r.pos.Path)
	if err != nil {
		return r.err(err)
	}
	return nil
}

// Close closes the current file and frees the decoder; rows not returned are dropped.
func (r *FileReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var err error
	if r.f != nil {
		err = r.f.Close()
		r.f = nil
	}
	if rec := r.dec.Flush(); rec != nil {
		rec.Release()
	}
	r.dec.Release()
	r.pool.Close()
	if r.part != nil {
		r.part.release()
	}
	return err
}
