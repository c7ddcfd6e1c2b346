package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flip changes one byte of the file at path.
func flip(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 1
	os.WriteFile(path, data, 0o600)
}

func TestStorageSkipsDamagedAndPartialCheckpoints(t *testing.T) {
	s := &Storage{Dir: t.TempDir()}
	for id := int64(1); id <= 4; id++ {
		if err := s.Write(&Metadata{ID: id, Tasks: []Ack{{Task: 0, State: []byte("pos")}}}); err != nil {
			t.Fatal(err)
		}
	}
	// 4 has both copies damaged, 3 only its first, 5 never finished (no metadata).
	flip(t, filepath.Join(s.Dir, "chk-4", "_metadata"))
	flip(t, filepath.Join(s.Dir, "chk-4", "_metadata.copy"))
	flip(t, filepath.Join(s.Dir, "chk-3", "_metadata"))
	os.MkdirAll(filepath.Join(s.Dir, "chk-5"), 0o700)
	m, damaged, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != 3 || string(m.Tasks[0].State) != "pos" {
		t.Errorf("restored %+v, want checkpoint 3 from its copy", m)
	}
	if len(damaged) != 1 || !errors.Is(damaged[0], ErrDamaged) || !strings.Contains(damaged[0].Error(), "chk-4") ||
		!strings.Contains(damaged[0].Error(), "checksum mismatch") {
		t.Errorf("damaged: %q", damaged)
	}
	if err := s.Retain(2); err != nil {
		t.Fatal(err)
	}
	ids, _ := s.IDs()
	if len(ids) != 4 || ids[3] != 2 { // 5, 4 (broken), 3 and 2 stay; 1 goes
		t.Errorf("after retain: %v", ids)
	}
}

func TestStorageEmpty(t *testing.T) {
	s := &Storage{Dir: filepath.Join(t.TempDir(), "none")}
	if _, _, err := s.Latest(); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("got %v", err)
	}
}
