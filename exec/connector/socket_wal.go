package connector

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// wal is a socket source's write-ahead log: every chunk received is appended and
// synced before it is decoded, so that a restored source replays what it had received
// after its checkpoint, which the server will not send again. Offsets count the bytes
// received since the log began; the file wal-<base> holds those from base on, and is
// rewritten from a later base once a checkpoint completed past what it would drop.
type wal struct {
	mu   sync.Mutex // the reading goroutine appends, the task compacts
	dir  string
	f    *os.File
	base int64 // the offset of the file's first byte
	end  int64 // the offset after its last byte

	marks map[int64]int64 // checkpoint id → its position, until it completes
}

// compactAfter is how many bytes no checkpoint needs a log keeps before rewriting.
const compactAfter = 8 << 20

func (w *wal) path(base int64) string {
	return filepath.Join(w.dir, "wal-"+strconv.FormatInt(base, 10))
}

// open starts an empty log, removing one an earlier run left.
func openWAL(dir string) (*wal, error) {
	w := &wal{dir: dir, marks: map[int64]int64{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := w.removeOthers(-1); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(w.path(0), os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	w.f = f
	return w, nil
}

// removeOthers removes the log files but the one starting at keep.
func (w *wal) removeOthers(keep int64) error {
	files, err := filepath.Glob(filepath.Join(w.dir, "wal-*"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if f != w.path(keep) {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// append logs data durably and returns the offset after it.
func (w *wal) append(data []byte) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(data); err != nil {
		return 0, err
	}
	w.end += int64(len(data))
	return w.end, w.f.Sync()
}

// recover reopens the log an earlier run left and returns what it holds from offset on.
func (w *wal) recover(offset int64) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(w.dir, "wal-*"))
	if err != nil {
		return nil, err
	}
	var base int64 = -1
	for _, f := range files {
		b, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(f), "wal-"), 10, 64)
		if err == nil && b <= offset && b > base {
			base = b
		}
	}
	if base < 0 {
		return nil, fmt.Errorf("the write-ahead log in %s no longer holds offset %d", w.dir, offset)
	}
	f, err := os.OpenFile(w.path(base), os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err == nil && int64(len(data)) < offset-base {
		err = fmt.Errorf("the write-ahead log %s ends before offset %d", f.Name(), offset)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.base, w.end = f, base, base+int64(len(data))
	if err := w.removeOthers(base); err != nil {
		return nil, err
	}
	return data[offset-base:], nil
}

// mark remembers the position of checkpoint id.
func (w *wal) mark(id, offset int64) { w.marks[id] = offset }

// complete drops the bytes before the position of checkpoint id, which no later restore
// needs, when they are many.
func (w *wal) complete(id int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	offset, ok := w.marks[id]
	for m := range w.marks {
		if m <= id {
			delete(w.marks, m)
		}
	}
	if !ok || offset-w.base < compactAfter {
		return nil
	}
	if _, err := w.f.Seek(offset-w.base, io.SeekStart); err != nil {
		return err
	}
	tail, err := io.ReadAll(w.f)
	if err != nil {
		return err
	}
	tmp := w.path(offset) + ".tmp"
	if err := os.WriteFile(tmp, tail, 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND, 0o644)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, w.path(offset))
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return err
	}
	old := w.f
	w.f, w.base = f, offset
	old.Close()
	if err := SyncDir(w.dir); err != nil {
		return err
	}
	return w.removeOthers(offset)
}

func (w *wal) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Close()
}

// socketPosition is a socket source's snapshot: its offset in the log and the number
// of records before it.
type socketPosition struct {
	stateHeader
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
}

func (p socketPosition) encode() ([]byte, error) { return json.Marshal(p) }
