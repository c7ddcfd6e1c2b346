package connector

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
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
//
// The file is a sequence of frames, one per chunk: its length (uvarint), its CRC-32C
// (4 bytes), its bytes. A frame that fails its checksum is damage, reported, never
// replayed; a frame cut short at the end is a write a crash interrupted, and dropped.
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := w.removeOthers(-1); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(w.path(0), os.O_CREATE|os.O_TRUNC|os.O_RDWR|os.O_APPEND, 0o600)
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
	if _, err := w.f.Write(frame(data)); err != nil {
		return 0, err
	}
	w.end += int64(len(data))
	return w.end, w.f.Sync()
}

var walCRC = crc32.MakeTable(crc32.Castagnoli)

// frame encodes one chunk of the log.
func frame(data []byte) []byte {
	out := binary.AppendUvarint(make([]byte, 0, len(data)+binary.MaxVarintLen64+4), uint64(len(data)))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(data, walCRC))
	return append(out, data...)
}

// unframe decodes a log file: the chunks' bytes, and the length of the file's whole
// frames (a last frame cut short by a crash is left out).
func unframe(name string, file []byte) (payload []byte, whole int, err error) {
	for pos := 0; pos < len(file); {
		n, w := binary.Uvarint(file[pos:])
		if w <= 0 || uint64(len(file)-pos-w) < n+4 {
			if w < 0 {
				return nil, 0, fmt.Errorf("the write-ahead log %s is %w at byte %d", name, ErrDamaged, pos)
			}
			break // cut short
		}
		sum := binary.BigEndian.Uint32(file[pos+w:])
		data := file[pos+w+4 : pos+w+4+int(n)]
		if crc32.Checksum(data, walCRC) != sum {
			return nil, 0, fmt.Errorf("the write-ahead log %s is %w at byte %d (checksum mismatch)", name, ErrDamaged, pos)
		}
		payload = append(payload, data...)
		pos += w + 4 + int(n)
		whole = pos
	}
	return payload, whole, nil
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
	f, err := os.OpenFile(w.path(base), os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	file, err := io.ReadAll(f)
	var data []byte
	var whole int
	if err == nil {
		data, whole, err = unframe(f.Name(), file)
	}
	if err == nil && int64(len(data)) < offset-base {
		err = fmt.Errorf("the write-ahead log %s ends before offset %d", f.Name(), offset)
	}
	if err == nil && whole < len(file) { // drop a frame a crash cut short
		if err = f.Truncate(int64(whole)); err == nil {
			_, err = f.Seek(int64(whole), io.SeekStart)
		}
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
	file, err := os.ReadFile(w.f.Name())
	if err != nil {
		return err
	}
	payload, _, err := unframe(w.f.Name(), file)
	if err != nil {
		return err
	}
	keep := w.end - offset // the bytes from offset on, the log's last ones
	if keep < 0 || keep > int64(len(payload)) {
		return fmt.Errorf("the write-ahead log %s holds %d bytes, not the %d after offset %d", w.f.Name(), len(payload), keep, offset)
	}
	tmp := w.path(offset) + ".tmp"
	if err := os.WriteFile(tmp, frame(payload[int64(len(payload))-keep:]), 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_APPEND, 0o600)
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
