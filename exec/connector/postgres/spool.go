package postgres

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec/connector"
)

// spool keeps the rows of exactly-once epochs on disk until their checkpoint
// completes: the rows after the last barrier go to open.rows, and on a barrier that
// file is synced and renamed epoch-<checkpoint>.rows. A file is a sequence of chunks,
// each an encoded buffer framed by its length and CRC-32C.
type spool struct {
	dir  string
	f    *os.File // open.rows, while rows of the current epoch have been written
	w    *bufio.Writer
	head [8]byte
}

const openName = "open.rows"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func epochName(id int64) string { return fmt.Sprintf("epoch-%d.rows", id) }

// append writes a chunk to the current epoch.
func (s *spool) append(chunk []byte) error {
	if s.f == nil {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(s.dir, openName), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	binary.LittleEndian.PutUint32(s.head[:4], uint32(len(chunk)))
	binary.LittleEndian.PutUint32(s.head[4:], crc32.Checksum(chunk, castagnoli))
	if _, err := s.w.Write(s.head[:]); err != nil {
		return err
	}
	_, err := s.w.Write(chunk)
	return err
}

// seal makes the current epoch durable as epoch id; it reports whether the epoch had
// rows (an empty one leaves no file).
func (s *spool) seal(id int64) (bool, error) {
	if s.f == nil {
		return false, nil
	}
	f := s.f
	s.f = nil
	err := s.w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(s.dir, epochName(id)))
	}
	if err == nil {
		err = connector.SyncDir(s.dir)
	}
	return err == nil, err
}

// read calls fn with each chunk of epoch id; the chunk is valid until fn returns.
func (s *spool) read(id int64, fn func(chunk []byte) error) error {
	f, err := os.Open(filepath.Join(s.dir, epochName(id)))
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var head [8]byte
	var chunk []byte
	for {
		if _, err := io.ReadFull(r, head[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", f.Name(), errCorrupt)
		}
		n := binary.LittleEndian.Uint32(head[:4])
		if n > 1<<30 {
			return fmt.Errorf("%s: %w", f.Name(), errCorrupt)
		}
		if cap(chunk) < int(n) {
			chunk = make([]byte, n)
		}
		chunk = chunk[:n]
		if _, err := io.ReadFull(r, chunk); err != nil || crc32.Checksum(chunk, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
			return fmt.Errorf("%s: %w", f.Name(), errCorrupt)
		}
		if err := fn(chunk); err != nil {
			return err
		}
	}
}

// exists reports whether epoch id's file is there.
func (s *spool) exists(id int64) bool {
	_, err := os.Stat(filepath.Join(s.dir, epochName(id)))
	return err == nil
}

// remove deletes epoch id's file.
func (s *spool) remove(id int64) error {
	err := os.Remove(filepath.Join(s.dir, epochName(id)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// clean deletes every file but those of the epochs in keep: what a failed attempt
// left behind.
func (s *spool) clean(keep map[int64]bool) error {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if id, ok := parseEpochName(e.Name()); ok && keep[id] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func parseEpochName(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "epoch-")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".rows")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// close closes the current epoch's file without sealing it.
func (s *spool) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
