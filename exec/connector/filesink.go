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
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
)

// ErrNotAppendOnly: an append-only sink received a row other than an insert.
var ErrNotAppendOnly = errors.New("sink accepts only inserts")

// FileSink is the filesystem sink: it writes the rows it receives, in the table's
// format, to part files in the directory 'path' (created if missing). It is
// append-only: an update or delete fails the job. A part file is written under a
// hidden name, which readers such as the filesystem source skip, and appears under its
// final name only once committed:
//
//   - In a job with checkpoints (two-phase commit, as Flink's file sink): on each
//     barrier the file written since the last one is synced and renamed to a hidden
//     pending name (.part-<sink>-<task>-<n>.<format>.pending), and when the checkpoint
//     completes, to part-<sink>-<task>-<n>.<format>. A restored sink commits the
//     pending files of its checkpoint and removes what failed attempts left, so a reader
//     never sees a partial, rolled-back or duplicated row.
//   - Without checkpoints: one file part-<uuid>-0.<format>, committed at the end of the
//     input or when the sink closes; a sink that failed removes it.
type FileSink struct {
	table    string
	dir      string
	format   string
	prefix   string // part-<sink>-<task>, or part-<uuid> without checkpoints
	twoPhase bool   // the job takes checkpoints
	enc      format.Encoder

	f       *os.File
	w       *bufio.Writer
	crc     uint32 // of what the open part file holds
	size    int64
	buf     []byte
	next    int64         // the number of the next part file
	pending []pendingPart // renamed on the barrier, waiting for their checkpoint
	started bool          // leftovers were cleaned (on restore or before the first write)
	failed  bool
	done    bool
}

// pendingPart is a part file waiting for checkpoint Checkpoint to complete, with the
// size and CRC-32C of what it must hold: a damaged file is never committed.
type pendingPart struct {
	Checkpoint int64  `json:"checkpoint"`
	Name       string `json:"name"` // its final name
	Size       int64  `json:"size"`
	CRC        uint32 `json:"crc"`
}

// fileSinkState is a FileSink's snapshot.
type fileSinkState struct {
	Next    int64         `json:"next"`
	Pending []pendingPart `json:"pending"`
}

var (
	_ Sink                = (*FileSink)(nil)
	_ exec.Snapshotter    = (*FileSink)(nil)
	_ exec.CommitListener = (*FileSink)(nil)
	_ exec.Restorer       = (*FileSink)(nil)
)

func openFileSink(spec SinkSpec) (*FileSink, error) {
	t := spec.Table
	o, err := NewOptions(t, []string{"path"}, true, nil)
	if err != nil {
		return nil, err
	}
	dir, err := o.Required("path")
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
	enc, err := format.NewEncoder(o.Format(), names, t.Options, spec.Location)
	if err != nil {
		return nil, formatErr(o, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, WrapError(t, err)
	}
	s := &FileSink{table: t.Name, dir: dir, format: o.Format(), enc: enc, twoPhase: spec.Checkpointed && spec.ID != ""}
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

// Path returns the final path of the current part file (which exists once committed).
func (s *FileSink) Path() string { return filepath.Join(s.dir, s.partName(s.next)) }

func (s *FileSink) hidden(name, suffix string) string {
	return filepath.Join(s.dir, "."+name+suffix)
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
	if s.f == nil {
		if err := s.start(); err != nil {
			return err
		}
		f, err := os.OpenFile(s.hidden(s.partName(s.next), ".inprogress"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			s.failed = true
			return wrapTable(s.table, err)
		}
		s.f = f
		s.w = bufio.NewWriterSize(f, 1<<20)
		s.crc, s.size = 0, 0
	}
	s.buf = format.AppendRows(s.buf[:0], s.enc, b)
	if _, err := s.w.Write(s.buf); err != nil {
		s.failed = true
		return wrapTable(s.table, err)
	}
	s.crc = crc32.Update(s.crc, castagnoli, s.buf)
	s.size += int64(len(s.buf))
	return nil
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
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return wrapTable(s.table, err)
	}
	for _, e := range entries {
		name := e.Name()
		if n, ok := s.partNumber(strings.TrimPrefix(name, ".")); ok {
			if strings.HasPrefix(name, ".") {
				if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
					return wrapTable(s.table, err)
				}
			} else {
				s.next = max(s.next, n+1)
			}
		}
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

// closeFile flushes, syncs and closes the file being written.
func (s *FileSink) closeFile() (string, error) {
	f := s.f
	s.f = nil
	err := s.w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// Snapshot pre-commits the part file written since the last barrier: synced and renamed
// to its pending name. The state lists every pending file, for a restore to commit.
func (s *FileSink) Snapshot(_ context.Context, id int64) ([]byte, error) {
	if !s.twoPhase {
		return nil, nil
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	if s.f != nil {
		inProgress, err := s.closeFile()
		if err == nil {
			name := s.partName(s.next)
			err = os.Rename(inProgress, s.hidden(name, ".pending"))
			s.pending = append(s.pending, pendingPart{Checkpoint: id, Name: name, Size: s.size, CRC: s.crc})
			s.next++
		}
		if err != nil {
			s.failed = true
			return nil, wrapTable(s.table, err)
		}
	}
	return json.Marshal(fileSinkState{Next: s.next, Pending: s.pending})
}

// CheckpointComplete commits the pending files of checkpoint id and earlier ones.
func (s *FileSink) CheckpointComplete(_ context.Context, id int64) error {
	var keep []pendingPart
	for _, p := range s.pending {
		if p.Checkpoint > id {
			keep = append(keep, p)
		} else if err := s.commit(p); err != nil {
			return err
		}
	}
	s.pending = keep
	return syncDirOf(s.table, s.dir)
}

// commit checks a pending file and renames it to its final name; one already renamed
// is committed.
func (s *FileSink) commit(p pendingPart) error {
	name := p.Name
	pending := s.hidden(name, ".pending")
	if data, err := os.ReadFile(pending); err == nil {
		if int64(len(data)) != p.Size || crc32.Checksum(data, castagnoli) != p.CRC {
			return fmt.Errorf("table %s: the pending part file %s is %w (%d bytes, want %d with CRC-32C %08x); it is not committed",
				s.table, pending, ErrDamaged, len(data), p.Size, p.CRC)
		}
	}
	err := os.Rename(pending, filepath.Join(s.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(s.dir, name)); serr == nil {
			return nil
		}
		return fmt.Errorf("table %s: the pending part file %s of a completed checkpoint is missing", s.table, name)
	}
	if err != nil {
		return wrapTable(s.table, err)
	}
	return nil
}

// Restore commits the pending files of the restored checkpoint, whose completion a
// crash may have kept from committing them, and removes what later attempts left.
func (s *FileSink) Restore(state []byte) error {
	if !s.twoPhase || state == nil {
		return nil
	}
	var st fileSinkState
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("table %s: cannot restore the filesystem sink: %w", s.table, err)
	}
	for _, p := range st.Pending {
		if err := s.commit(p); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return wrapTable(s.table, err)
	}
	s.next, s.pending, s.started = st.Next, nil, true
	for _, e := range entries {
		name, hidden := strings.CutPrefix(e.Name(), ".")
		n, mine := s.partNumber(name)
		switch {
		case mine && hidden:
			if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil {
				return wrapTable(s.table, err)
			}
		case mine:
			s.next = max(s.next, n+1)
		}
	}
	return syncDirOf(s.table, s.dir)
}

// Finish commits the part file when the job takes no checkpoints; otherwise the job's
// final checkpoint pre-commits it and its completion commits it.
func (s *FileSink) Finish(context.Context) error {
	if s.twoPhase {
		return nil
	}
	return s.end()
}

// Close commits the part file of a job without checkpoints unless Finish did or the
// sink failed; a failed sink removes its file. With checkpoints, what is not committed
// stays for a restore to commit or remove.
func (s *FileSink) Close() error {
	if s.twoPhase {
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
		return nil
	}
	return s.end()
}

func (s *FileSink) end() error {
	if s.done {
		return nil
	}
	s.done = true
	if s.f == nil {
		return nil
	}
	if s.failed {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
		return nil
	}
	inProgress, err := s.closeFile()
	if err == nil {
		err = os.Rename(inProgress, s.Path())
	}
	if err != nil {
		return wrapTable(s.table, err)
	}
	return syncDirOf(s.table, s.dir)
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
