package checkpoint

import (
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
)

// Metadata is what a completed checkpoint records: every task's state handle and every
// source's position, all from the same barrier.
type Metadata struct {
	ID        int64
	Job       string // the job's identity, for a readable directory
	Savepoint bool
	// StateFile names the state store that holds the keyed state of this checkpoint
	// (its identity, not its path), so a replaced or recreated file is detected.
	StateFile string `json:",omitempty"`
	Started   time.Time
	Completed time.Time
	Tasks     []Ack
	// Slots names, for each task (by Ack.Task), the operator each entry of its state
	// belongs to ("" for none), so a savepoint can be made of the checkpoint by itself;
	// Meanings says what each operator's state means, and Layout is the tasks per stage.
	Slots    [][]string          `json:",omitempty"`
	Meanings map[string][]string `json:",omitempty"`
	Layout   string              `json:",omitempty"`
}

// Storage keeps a job's completed checkpoints in a directory, one subdirectory
// chk-<id> each, holding a _metadata file written atomically with a checksum, and a
// second copy of it, so that one damaged file does not cost the checkpoint.
type Storage struct {
	Dir string
}

// ErrNoCheckpoint says there is no completed checkpoint to restore.
var ErrNoCheckpoint = errors.New("no completed checkpoint")

// ErrDamaged says a checkpoint's metadata exists but cannot be read back intact.
var ErrDamaged = errors.New("damaged checkpoint")

const (
	metadataFile = "_metadata"
	metadataCopy = "_metadata.copy"
)

// Write stores m durably: the file is written under a temporary name, synced, renamed
// into place, and its directory synced. Only then is the checkpoint complete.
func (s *Storage) Write(m *Metadata) error {
	dir := filepath.Join(s.Dir, fmt.Sprintf("chk-%d", m.ID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint %d: %w", m.ID, err)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("checkpoint %d: %w", m.ID, err)
	}
	// First line: the checksum of the body, so a torn or altered file is detected.
	data := fmt.Appendf(nil, "crc32c %08x\n", crc32.Checksum(body, castagnoli))
	data = append(data, body...)
	for _, name := range []string{metadataFile, metadataCopy} {
		tmp := filepath.Join(dir, name+".tmp")
		if err := writeSynced(tmp, data); err != nil {
			return fmt.Errorf("checkpoint %d: %w", m.ID, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("checkpoint %d: %w", m.ID, err)
		}
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("checkpoint %d: %w", m.ID, err)
		}
	}
	return syncDir(s.Dir)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read returns checkpoint id's metadata, checking its checksum: the first intact copy.
// A checkpoint with no metadata never completed (ErrNoCheckpoint); one whose copies are
// all damaged is ErrDamaged.
func (s *Storage) Read(id int64) (*Metadata, error) {
	var errs []error
	for _, name := range []string{metadataFile, metadataCopy} {
		m, err := s.readFile(id, name)
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("checkpoint %d never completed: %w", id, ErrNoCheckpoint)
	}
	return nil, fmt.Errorf("%w: %w", ErrDamaged, errors.Join(errs...))
}

func (s *Storage) readFile(id int64, name string) (*Metadata, error) {
	path := filepath.Join(s.Dir, fmt.Sprintf("chk-%d", id), name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeMetadata(path, data, id)
}

// decodeMetadata checks and decodes the metadata file at path, of checkpoint id.
func decodeMetadata(path string, data []byte, id int64) (*Metadata, error) {
	header, body, ok := strings.Cut(string(data), "\n")
	var sum uint32
	if _, err := fmt.Sscanf(header, "crc32c %08x", &sum); !ok || err != nil {
		return nil, fmt.Errorf("%s: metadata has no checksum header", path)
	}
	if got := crc32.Checksum([]byte(body), castagnoli); got != sum {
		return nil, fmt.Errorf("%s: metadata checksum mismatch (stored %08x, computed %08x)", path, sum, got)
	}
	m := &Metadata{}
	if err := json.Unmarshal([]byte(body), m); err != nil {
		return nil, fmt.Errorf("%s: metadata: %w", path, err)
	}
	if m.ID != id {
		return nil, fmt.Errorf("%s: metadata names checkpoint %d", path, m.ID)
	}
	return m, nil
}

// IDs returns the ids of the checkpoint directories, newest first, whether complete or not.
func (s *Storage) IDs() ([]int64, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), "chk-"); ok && e.IsDir() {
			if id, err := strconv.ParseInt(n, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] > ids[j] })
	return ids, nil
}

// Latest returns the newest checkpoint whose metadata is intact, and the errors of the
// newer ones that were damaged (ErrDamaged). Checkpoints that never completed are
// skipped without a word.
func (s *Storage) Latest() (*Metadata, []error, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, nil, err
	}
	var damaged []error
	for _, id := range ids {
		m, err := s.Read(id)
		if err == nil {
			return m, damaged, nil
		}
		if errors.Is(err, ErrDamaged) {
			damaged = append(damaged, err)
		}
	}
	return nil, damaged, ErrNoCheckpoint
}

// Retain deletes the checkpoint directories older than the newest keep complete ones,
// and every directory older than those that never completed.
func (s *Storage) Retain(keep int) error {
	ids, err := s.IDs()
	if err != nil {
		return err
	}
	complete := 0
	for _, id := range ids {
		if complete >= keep {
			if err := os.RemoveAll(filepath.Join(s.Dir, fmt.Sprintf("chk-%d", id))); err != nil {
				return err
			}
			continue
		}
		if _, err := s.Read(id); err == nil {
			complete++
		}
	}
	return nil
}

// Discard removes an aborted checkpoint's directory.
func (s *Storage) Discard(id int64) error {
	return os.RemoveAll(filepath.Join(s.Dir, fmt.Sprintf("chk-%d", id)))
}
