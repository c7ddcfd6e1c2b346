package postgres

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSpool reads an exactly-once spool file, intact, cut short or damaged, and decodes
// its chunks as a restore does: an error or rows, never a panic.
func FuzzSpool(f *testing.F) {
	dir := f.TempDir()
	s := &spool{dir: dir}
	b := newBuffer([]string{"id", "name"}, []kind{kInt64, kString}, []int{0})
	if err := s.append(b.encode(nil)); err != nil {
		f.Fatal(err)
	}
	if _, err := s.seal(1); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, epochName(1)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 7})
	f.Fuzz(func(t *testing.T, file []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, epochName(1)), file, 0o600); err != nil {
			t.Fatal(err)
		}
		(&spool{dir: dir}).read(1, func(chunk []byte) error {
			return newBuffer([]string{"id", "name"}, []kind{kInt64, kString}, []int{0}).decode(chunk)
		})
	})
}
