package connector

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// ErrNotAppendOnly: an append-only sink received a row other than an insert.
var ErrNotAppendOnly = errors.New("sink accepts only inserts")

// FileSink is the filesystem sink: it writes the rows it receives, in the table's
// format, to part files in the directory 'path' (created if missing), or, for a table
// PARTITIONED BY columns, in one directory per partition under it
// (path/dt=2024-05-06/hm=07:00/part-...), the partition columns in the directory names
// and not in the files, as Flink writes them. It is append-only: an update or delete
// fails the job. A part file is written under a hidden name, which readers such as the
// filesystem source skip, and appears under its final name only once committed:
//
//   - In a job with checkpoints (two-phase commit, as Flink's file sink): on each
//     barrier, and whenever the rolling policy rolls a file in between, the file is
//     synced and renamed to a hidden pending name
//     (.part-<sink>-<task>-<n>.<format>.pending), and when the checkpoint of that
//     barrier completes, to part-<sink>-<task>-<n>.<format>. A restored sink commits
//     the pending files of its checkpoint and removes what failed attempts left, so a
//     reader never sees a partial, rolled-back or duplicated row.
//   - Without checkpoints: part-<uuid>-<n>.<format>, each committed when it rolls and
//     at the end of the input or when the sink closes; a sink that failed removes the
//     files it had open.
//
// A partition whose files were committed is committed itself when its trigger says
// (see commitPolicy): with the 'success-file' policy, an empty _SUCCESS file appears in
// its directory. The partitions waiting for their trigger are in the snapshot.
type FileSink struct {
	table    string
	dir      string
	format   string
	prefix   string // part-<sink>-<task>, or part-<uuid> without checkpoints
	twoPhase bool   // the job takes checkpoints
	enc      format.Encoder
	part     *partitioning // nil: not partitioned
	data     []int         // the columns the files hold: all but the partition columns
	roll     rollingPolicy
	commit   commitPolicy
	now      func() time.Time

	open      map[string]*partFile // by partition directory ("" when not partitioned)
	buf       []byte
	key       []byte
	next      int64         // the number of the next part file
	rolled    []pendingPart // rolled since the last barrier, pending (two-phase only)
	pending   []pendingPart // renamed on the barrier, waiting for their checkpoint
	waiting   map[string]int64
	written   map[string]bool // partitions written without checkpoints, committed at the end
	wm        int64           // the latest watermark
	wmAt      map[int64]int64 // the watermark at each checkpoint's barrier
	lastCheck time.Time
	started   bool // leftovers were cleaned (on restore or before the first write)
	failed    bool
	done      bool
	ended     bool // the input ended: the final checkpoint commits every partition
}

// partFile is a part file being written.
type partFile struct {
	dir    string // its partition directory, relative to the table's path
	n      int64  // its number
	f      *os.File
	w      *bufio.Writer
	crc    uint32 // of what it holds
	size   int64
	opened time.Time
	last   time.Time // of the latest write
}

// pendingPart is a part file waiting for checkpoint Checkpoint to complete, with the
// size and CRC-32C of what it must hold: a damaged file is never committed.
type pendingPart struct {
	Checkpoint int64  `json:"checkpoint"`
	Name       string `json:"name"`          // its final name
	Dir        string `json:"dir,omitempty"` // its partition directory
	Size       int64  `json:"size"`
	CRC        uint32 `json:"crc"`
}

// fileSinkState is a FileSink's snapshot.
type fileSinkState struct {
	Next    int64         `json:"next"`
	Pending []pendingPart `json:"pending"`
	// Waiting are the partitions whose files are committed and which wait for their
	// commit trigger, each with the time (ms) its first files were committed.
	Waiting   map[string]int64 `json:"waiting,omitempty"`
	Watermark int64            `json:"watermark,omitempty"`
	Ended     bool             `json:"ended,omitempty"`
}

var (
	_ Sink                  = (*FileSink)(nil)
	_ exec.Snapshotter      = (*FileSink)(nil)
	_ exec.CommitListener   = (*FileSink)(nil)
	_ exec.Restorer         = (*FileSink)(nil)
	_ exec.WatermarkHandler = (*FileSink)(nil)
	_ exec.Clocked          = (*FileSink)(nil)
)

func openFileSink(spec SinkSpec) (*FileSink, error) {
	t := spec.Table
	o, err := NewOptions(t, fileOptionKeys, true, nil)
	if err != nil {
		return nil, err
	}
	dir, err := o.Required("path")
	if err != nil {
		return nil, err
	}
	dir = strings.TrimPrefix(dir, "file://")
	roll, err := newRollingPolicy(o)
	if err != nil {
		return nil, err
	}
	commit, err := newCommitPolicy(o)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(spec.Schema))
	for i, c := range spec.Schema {
		names[i] = c.Name
	}
	if phys := t.PhysicalSchema(); len(phys) == len(names) {
		for i, c := range phys {
			names[i] = c.Name // the table's column names, as Flink writes them
		}
	}
	part, err := newPartitioning(o, t, names, spec.Location)
	if err != nil {
		return nil, err
	}
	var data []int
	var dataCols planner.Schema
	for i, n := range names {
		if part == nil || !part.isKey(i) {
			data = append(data, i)
			dataCols = append(dataCols, planner.Column{Name: n, Type: spec.Schema[i].Type})
		}
	}
	enc, err := format.NewEncoder(o.Format(), dataCols, t.Options, spec.Location)
	if err != nil {
		return nil, formatErr(o, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, WrapError(t, err)
	}
	s := &FileSink{table: t.Name, dir: dir, format: o.Format(), enc: enc, part: part, roll: roll, commit: commit,
		now: spec.Now, twoPhase: spec.Checkpointed && spec.ID != "", open: map[string]*partFile{},
		waiting: map[string]int64{}, written: map[string]bool{}, wm: exec.MinWatermark, wmAt: map[int64]int64{}}
	if part != nil {
		s.data = data
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.lastCheck = s.now()
	if s.twoPhase {
		sum := sha256.Sum256([]byte(spec.ID))
		s.prefix = fmt.Sprintf("part-%s-%d", hex.EncodeToString(sum[:4]), spec.Task)
	} else {
		id, err := newUUID()
		if err != nil {
			return nil, WrapError(t, err)
		}
		s.prefix = "part-" + id
	}
	return s, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// partName is the final name of part file n.
func (s *FileSink) partName(n int64) string {
	return fmt.Sprintf("%s-%d.%s", s.prefix, n, s.format)
}

// Path returns the final path the next part file of an unpartitioned table takes (it
// exists once committed).
func (s *FileSink) Path() string {
	if f := s.open[""]; f != nil {
		return filepath.Join(s.dir, s.partName(f.n))
	}
	return filepath.Join(s.dir, s.partName(s.next))
}

// hidden is the path of a part file's hidden form in partition directory dir.
func (s *FileSink) hidden(dir, name, suffix string) string {
	return filepath.Join(s.dir, dir, "."+name+suffix)
}

// Process writes the rows of b; see exec.Operator.
func (s *FileSink) Process(_ context.Context, _ int, b exec.Batch) error {
	if s.done || s.failed {
		return fmt.Errorf("table %s: filesystem sink is finished or has failed", s.table)
	}
	if b.Len() == 0 {
		return nil
	}
	for _, k := range b.Kinds {
		if k != exec.Insert && !format.IsChangelog(s.format) {
			s.failed = true
			return &kindError{msg: "filesystem sink " + s.table + " accepts only inserts; the query produces updates", kind: ErrNotAppendOnly}
		}
	}
	if err := s.start(); err != nil {
		return err
	}
	now := s.now()
	if s.part == nil {
		f, err := s.file("", now)
		if err != nil {
			return err
		}
		s.buf = format.AppendRows(s.buf[:0], s.enc, b)
		if err := s.write(f, s.buf, now); err != nil {
			return err
		}
	} else if err := s.writePartitioned(b, now); err != nil {
		return err
	}
	return s.maybeRoll(now)
}

// writePartitioned writes each row of b to the file of its partition, without the
// partition columns.
func (s *FileSink) writePartitioned(b exec.Batch, now time.Time) error {
	cols := b.Rec.Columns()
	dataCols := make([]arrow.Array, len(s.data))
	fields := make([]arrow.Field, len(s.data))
	for i, c := range s.data {
		dataCols[i], fields[i] = cols[c], b.Rec.Schema().Field(c)
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), dataCols, b.Rec.NumRows())
	defer rec.Release()
	data := exec.Batch{Rec: rec, Kinds: b.Kinds}
	var f *partFile
	for i, n := 0, b.Len(); i < n; i++ {
		s.key = s.part.appendDir(s.key[:0], cols, i)
		if f == nil || f.dir != string(s.key) {
			var err error
			if f, err = s.file(string(s.key), now); err != nil {
				return err
			}
		}
		s.buf = s.enc.AppendRow(s.buf[:0], data, i)
		if err := s.write(f, s.buf, now); err != nil {
			return err
		}
		if s.open[f.dir] != f { // it rolled
			f = nil
		}
	}
	return nil
}

// file returns the open part file of partition dir, opening one if there is none.
func (s *FileSink) file(dir string, now time.Time) (*partFile, error) {
	if f := s.open[dir]; f != nil {
		return f, nil
	}
	if err := os.MkdirAll(filepath.Join(s.dir, dir), 0o755); err != nil {
		s.failed = true
		return nil, wrapTable(s.table, err)
	}
	n := s.next
	osf, err := os.OpenFile(s.hidden(dir, s.partName(n), ".inprogress"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		s.failed = true
		return nil, wrapTable(s.table, err)
	}
	s.next++
	f := &partFile{dir: dir, n: n, f: osf, w: bufio.NewWriterSize(osf, 64<<10), opened: now, last: now}
	s.open[dir] = f
	return f, nil
}

func (s *FileSink) write(f *partFile, data []byte, now time.Time) error {
	if _, err := f.w.Write(data); err != nil {
		s.failed = true
		return wrapTable(s.table, err)
	}
	f.crc = crc32.Update(f.crc, castagnoli, data)
	f.size += int64(len(data))
	f.last = now
	if f.size >= s.roll.fileSize {
		return s.rollFile(f)
	}
	return nil
}

// maybeRoll rolls the files that have been open longer than the rollover interval, or
// written to last longer ago than the inactivity interval, at most once every check
// interval.
func (s *FileSink) maybeRoll(now time.Time) error {
	if now.Sub(s.lastCheck) < s.roll.checkInterval {
		return nil
	}
	s.lastCheck = now
	for _, dir := range sortedKeys(s.open) {
		f := s.open[dir]
		if now.Sub(f.opened) >= s.roll.rollover || (s.roll.inactivity > 0 && now.Sub(f.last) >= s.roll.inactivity) {
			if err := s.rollFile(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush checks the rolling policy's time limits while no rows come; see exec.Flusher.
func (s *FileSink) Flush(context.Context) error {
	if s.done || s.failed || len(s.open) == 0 {
		return nil
	}
	return s.maybeRoll(s.now())
}

// Clocked makes the task flush the sink at every poll, so that a file rolls on time
// while no rows come; see exec.Clocked.
func (s *FileSink) Clocked() {}

// ProcessWatermark notes the watermark, which the 'partition-time' trigger compares
// with a partition's time; see exec.WatermarkHandler.
func (s *FileSink) ProcessWatermark(_ context.Context, wm int64) error {
	s.wm = max(s.wm, wm)
	return nil
}

// rollFile closes part file f: with checkpoints it becomes pending, for the next
// barrier's checkpoint to commit; without, it is committed now.
func (s *FileSink) rollFile(f *partFile) error {
	delete(s.open, f.dir)
	inProgress, err := closePart(f)
	name := s.partName(f.n)
	if err == nil && s.twoPhase {
		err = os.Rename(inProgress, s.hidden(f.dir, name, ".pending"))
		s.rolled = append(s.rolled, pendingPart{Name: name, Dir: f.dir, Size: f.size, CRC: f.crc})
	} else if err == nil {
		if err = os.Rename(inProgress, filepath.Join(s.dir, f.dir, name)); err == nil {
			err = SyncDir(filepath.Join(s.dir, f.dir))
		}
		s.written[f.dir] = true
	}
	if err != nil {
		s.failed = true
		return wrapTable(s.table, err)
	}
	return nil
}

// closePart flushes, syncs and closes a part file.
func closePart(f *partFile) (string, error) {
	err := f.w.Flush()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	return f.f.Name(), err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func wrapTable(table string, err error) error { return fmt.Errorf("table %s: %w", table, err) }

// start cleans what earlier attempts left, once, unless a restore did, and numbers the
// part files after those already committed.
func (s *FileSink) start() error {
	if s.started || !s.twoPhase {
		s.started = true
		return nil
	}
	s.started = true
	return s.cleanLeftovers()
}

// cleanLeftovers removes this sink's hidden part files, in every partition directory,
// and numbers new part files after its committed ones.
func (s *FileSink) cleanLeftovers() error {
	err := filepath.WalkDir(s.dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		name, hidden := strings.CutPrefix(e.Name(), ".")
		n, mine := s.partNumber(name)
		switch {
		case mine && hidden:
			return os.Remove(path)
		case mine:
			s.next = max(s.next, n+1)
		}
		return nil
	})
	if err != nil {
		return wrapTable(s.table, err)
	}
	return nil
}

// partNumber returns n when name is part file n of this sink, in any state.
func (s *FileSink) partNumber(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, s.prefix+"-")
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, ".")
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil && n >= 0
}

// Snapshot pre-commits the part files written since the last barrier: synced and
// renamed to their pending names. The state lists every pending file, for a restore to
// commit, and the partitions waiting for their commit trigger.
func (s *FileSink) Snapshot(_ context.Context, id int64) ([]byte, error) {
	if !s.twoPhase {
		return nil, nil
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	for _, dir := range sortedKeys(s.open) {
		if err := s.rollFile(s.open[dir]); err != nil {
			return nil, err
		}
	}
	for _, p := range s.rolled {
		p.Checkpoint = id
		s.pending = append(s.pending, p)
	}
	s.rolled = nil
	s.wmAt[id] = s.wm
	st := fileSinkState{Next: s.next, Pending: s.pending, Ended: s.ended}
	if s.part != nil {
		st.Waiting, st.Watermark = s.waiting, s.wm
	}
	return json.Marshal(st)
}

// CheckpointComplete commits the pending files of checkpoint id and earlier ones, then
// the partitions whose trigger fires.
func (s *FileSink) CheckpointComplete(_ context.Context, id int64) error {
	var keep []pendingPart
	dirs := map[string]bool{}
	now := s.now().UnixMilli()
	for _, p := range s.pending {
		if p.Checkpoint > id {
			keep = append(keep, p)
			continue
		}
		if err := s.commitPart(p); err != nil {
			return err
		}
		dirs[p.Dir] = true
		if _, ok := s.waiting[p.Dir]; !ok && s.part != nil {
			s.waiting[p.Dir] = now
		}
	}
	s.pending = keep
	for dir := range dirs {
		if err := syncDirOf(s.table, filepath.Join(s.dir, dir)); err != nil {
			return err
		}
	}
	wm, ok := s.wmAt[id]
	if !ok {
		wm = s.wm
	}
	for c := range s.wmAt {
		if c <= id {
			delete(s.wmAt, c)
		}
	}
	return s.commitPartitions(wm, s.ended && len(s.pending) == 0)
}

// commitPartitions commits the waiting partitions whose trigger fires at watermark wm
// and now, or all of them.
func (s *FileSink) commitPartitions(wm int64, all bool) error {
	now := s.now().UnixMilli()
	for _, dir := range sortedKeys(s.waiting) {
		fire := all
		if !fire {
			var err error
			if fire, err = s.commit.fires(s.part, dir, s.waiting[dir], now, wm); err != nil {
				return fmt.Errorf("table %s: partition %s: %w", s.table, dir, err)
			}
		}
		if !fire {
			continue
		}
		if err := s.commit.apply(filepath.Join(s.dir, dir)); err != nil {
			return wrapTable(s.table, err)
		}
		delete(s.waiting, dir)
	}
	return nil
}

// commitPart checks a pending file and renames it to its final name; one already
// renamed is committed.
func (s *FileSink) commitPart(p pendingPart) error {
	name := p.Name
	pending := s.hidden(p.Dir, name, ".pending")
	final := filepath.Join(s.dir, p.Dir, name)
	if data, err := os.ReadFile(pending); err == nil {
		if int64(len(data)) != p.Size || crc32.Checksum(data, castagnoli) != p.CRC {
			return fmt.Errorf("table %s: the pending part file %s is %w (%d bytes, want %d with CRC-32C %08x); it is not committed",
				s.table, pending, ErrDamaged, len(data), p.Size, p.CRC)
		}
	}
	err := os.Rename(pending, final)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(final); serr == nil {
			return nil
		}
		return fmt.Errorf("table %s: the pending part file %s of a completed checkpoint is missing", s.table, filepath.Join(p.Dir, name))
	}
	if err != nil {
		return wrapTable(s.table, err)
	}
	return nil
}

// Restore commits the pending files of the restored checkpoint, whose completion a
// crash may have kept from committing them, and the partitions whose trigger fired;
// it removes what later attempts left.
func (s *FileSink) Restore(state []byte) error {
	if !s.twoPhase || state == nil {
		return nil
	}
	var st fileSinkState
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("table %s: cannot restore the filesystem sink: %w", s.table, err)
	}
	now := s.now().UnixMilli()
	for dir, t := range st.Waiting {
		s.waiting[dir] = t
	}
	for _, p := range st.Pending {
		if err := s.commitPart(p); err != nil {
			return err
		}
		if _, ok := s.waiting[p.Dir]; !ok && s.part != nil {
			s.waiting[p.Dir] = now
		}
	}
	s.next, s.pending, s.started, s.ended = st.Next, nil, true, st.Ended
	if st.Watermark != 0 {
		s.wm = st.Watermark
	}
	if err := s.cleanLeftovers(); err != nil {
		return err
	}
	if err := s.syncTree(); err != nil {
		return err
	}
	return s.commitPartitions(s.wm, s.ended)
}

// syncTree makes the renames in the table's directories durable.
func (s *FileSink) syncTree() error {
	err := filepath.WalkDir(s.dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		return SyncDir(path)
	})
	if err != nil {
		return wrapTable(s.table, err)
	}
	return nil
}

// Finish commits the part files when the job takes no checkpoints; otherwise the job's
// final checkpoint pre-commits them and its completion commits them and every waiting
// partition.
func (s *FileSink) Finish(context.Context) error {
	if s.twoPhase {
		s.ended = true
		return nil
	}
	return s.end()
}

// Close commits the part files of a job without checkpoints unless Finish did or the
// sink failed; a failed sink removes its open files. With checkpoints, what is not
// committed stays for a restore to commit or remove.
func (s *FileSink) Close() error {
	if s.twoPhase {
		for dir, f := range s.open {
			f.f.Close()
			delete(s.open, dir)
		}
		return nil
	}
	return s.end()
}

// end commits what a job without checkpoints wrote: its open files, then its
// partitions.
func (s *FileSink) end() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.failed {
		for dir, f := range s.open {
			f.f.Close()
			os.Remove(f.f.Name())
			delete(s.open, dir)
		}
		return nil
	}
	for _, dir := range sortedKeys(s.open) {
		if err := s.rollFile(s.open[dir]); err != nil {
			return err
		}
	}
	if s.part == nil {
		return nil
	}
	for dir := range s.written {
		s.waiting[dir] = 0
	}
	return s.commitPartitions(exec.MaxWatermark, true)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func syncDirOf(table, dir string) error {
	if err := SyncDir(dir); err != nil {
		return wrapTable(table, err)
	}
	return nil
}

// SyncDir makes a rename in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
