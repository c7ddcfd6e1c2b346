package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTestSavepoint writes a savepoint with one keyed state file of n keys.
func writeTestSavepoint(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sp")
	w, err := CreateSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.Create("keyed/aggregate-1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := WriteKV(f, []byte{0, byte(i), 'k'}, []byte(fmt.Sprintf("value %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sp := &Savepoint{Job: "j", Checkpoint: 7, Taken: time.Unix(0, 0).UTC(), Parallelism: "1",
		Operators: []SavedOperator{{UID: "aggregate-1", Kind: "aggregate", Handles: [][]byte{[]byte(`{"Checkpoint":7}`)}, Keyed: "keyed/aggregate-1", Keys: int64(n)}}}
	if err := w.Finish(sp); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSavepointRoundTrip: what is written reads back, from the directory or its
// _metadata, wherever the directory was moved, with its keyed state in order.
func TestSavepointRoundTrip(t *testing.T) {
	dir := writeTestSavepoint(t, 3)
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{moved, filepath.Join(moved, MetadataName)} {
		sp, got, err := ReadSavepoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != moved || sp.Version != SavepointVersion || sp.Checkpoint != 7 || len(sp.Operators) != 1 || len(sp.Files) != 1 {
			t.Fatalf("%s: read %+v from %s", path, sp, got)
		}
	}
	f, err := os.Open(filepath.Join(moved, "keyed", "aggregate-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	if err := ReadKV(f, func(k, v []byte) error {
		keys = append(keys, fmt.Sprintf("%x=%s", k, v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, " ") != "00006b=value 0 00016b=value 1 00026b=value 2" {
		t.Errorf("keyed state %v", keys)
	}
}

// TestSavepointDamage: a savepoint cut short, or with a changed, missing or foreign
// file, or of a later format, is refused by name, never read.
func TestSavepointDamage(t *testing.T) {
	cases := map[string]struct {
		damage func(dir string)
		want   error
		text   string
	}{
		"cut short": {func(dir string) { os.Remove(filepath.Join(dir, MetadataName)) }, ErrIncomplete, "cut short"},
		"metadata edited": {func(dir string) {
			data, _ := os.ReadFile(filepath.Join(dir, MetadataName))
			os.WriteFile(filepath.Join(dir, MetadataName), bytes.Replace(data, []byte(`"Checkpoint": 7`), []byte(`"Checkpoint": 8`), 1), 0o600)
		}, ErrDamaged, "checksum"},
		"metadata not JSON": {func(dir string) { os.WriteFile(filepath.Join(dir, MetadataName), []byte("{"), 0o600) }, ErrDamaged, "does not decode"},
		"state file changed": {func(dir string) {
			os.WriteFile(filepath.Join(dir, "keyed", "aggregate-1"), []byte("something else"), 0o600)
		}, ErrDamaged, "keyed/aggregate-1"},
		"state file missing": {func(dir string) { os.Remove(filepath.Join(dir, "keyed", "aggregate-1")) }, ErrDamaged, "keyed/aggregate-1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeTestSavepoint(t, 50)
			c.damage(dir)
			_, _, err := ReadSavepoint(dir)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("got %v, want %v about %q", err, c.want, c.text)
			}
		})
	}
	t.Run("later version", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sp")
		w, _ := CreateSavepoint(dir)
		if err := w.Finish(&Savepoint{Job: "j"}); err != nil {
			t.Fatal(err)
		}
		sp, _, _ := ReadSavepoint(dir)
		sp.Version = SavepointVersion + 1
		os.Remove(filepath.Join(dir, MetadataName))
		(&SavepointWriter{Dir: dir}).finishAs(sp)
		if _, _, err := ReadSavepoint(dir); err == nil || !strings.Contains(err.Error(), "format version") {
			t.Errorf("a later version: %v", err)
		}
	})
	t.Run("file outside", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sp")
		w, _ := CreateSavepoint(dir)
		w.files = append(w.files, SavedFile{Path: "../../etc/passwd"})
		w.Finish(&Savepoint{Job: "j"})
		if _, _, err := ReadSavepoint(dir); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "outside") {
			t.Errorf("a file outside the savepoint: %v", err)
		}
	})
}

// FuzzKeyedState: ReadKV never panics on a damaged keyed state file, and reads back
// what WriteKV wrote.
func FuzzKeyedState(f *testing.F) {
	var buf bytes.Buffer
	WriteKV(&buf, []byte("key"), []byte("value"))
	f.Add(buf.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var again bytes.Buffer
		var first []string
		err := ReadKV(bytes.NewReader(data), func(k, v []byte) error {
			first = append(first, fmt.Sprintf("%x=%x", k, v))
			return WriteKV(&again, k, v)
		})
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("error %v is not ErrDamaged", err)
			}
			return
		}
		var second []string
		if err := ReadKV(&again, func(k, v []byte) error {
			second = append(second, fmt.Sprintf("%x=%x", k, v))
			return nil
		}); err != nil || strings.Join(first, " ") != strings.Join(second, " ") {
			t.Fatalf("%v: read %v, then %v", err, first, second)
		}
	})
}
