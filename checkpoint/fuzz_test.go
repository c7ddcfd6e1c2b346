package checkpoint

import (
	"fmt"
	"hash/crc32"
	"testing"
)

// FuzzMetadata feeds metadata files, intact or not, to the decoder: it returns the
// checkpoint or an error, never a panic, and never accepts a body whose checksum fails.
func FuzzMetadata(f *testing.F) {
	body := `{"ID":3,"Job":"insert-out","Tasks":[{"Checkpoint":3,"Task":0,"State":"WyJlMzAiXQ=="}]}`
	f.Add(fmt.Appendf(nil, "crc32c %08x\n%s", crc32.Checksum([]byte(body), castagnoli), body))
	f.Add([]byte("crc32c 00000000\n{}"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMetadata("_metadata", data, 3)
		if err == nil && m.ID != 3 {
			t.Fatalf("accepted metadata of checkpoint %d", m.ID)
		}
	})
}
