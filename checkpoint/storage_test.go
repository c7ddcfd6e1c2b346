package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStorageSkipsCorruptAndPartialCheckpoints(t *testing.T) {
	s := &Storage{Dir: t.TempDir()}
	for id := int64(1); id <= 4; id++ {
		if err := s.Write(&Metadata{ID: id, Tasks: []Ack{{Task: 0, State: []byte("pos")}}}); err != nil {
			t.Fatal(err)
		}
	}
	// 4 is corrupted (one byte flipped), 5 never finished (no metadata).
	path := filepath.Join(s.Dir, "chk-4", "_metadata")
	data, _ := os.ReadFile(path)
	data[len(data)-3] ^= 1
	os.WriteFile(path, data, 0o644)
	os.MkdirAll(filepath.Join(s.Dir, "chk-5"), 0o755)
	var warnings []string
	m, err := s.Latest(func(err error) { warnings = append(warnings, err.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != 3 || string(m.Tasks[0].State) != "pos" {
		t.Errorf("restored %+v, want checkpoint 3", m)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "checkpoint 5") || !strings.Contains(warnings[1], "checksum mismatch") {
		t.Errorf("warnings: %q", warnings)
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
	if _, err := s.Latest(nil); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("got %v", err)
	}
}
