package state

import "testing"

// FuzzStoredValue feeds stored key-group entries, intact or not, to the decoders a
// restore uses: a damaged entry is an error, never a panic or a silent change.
func FuzzStoredValue(f *testing.F) {
	prefix := KeyPrefix(7)
	entry := appendChange(appendChange(nil, append(prefix, 'a'), []byte("one"), true), append(prefix, 'b'), nil, false)
	f.Add(sealValue(prefix, entry))
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, stored []byte) {
		entry, err := openValue(prefix, stored)
		if err != nil {
			return
		}
		forEachChange(entry, func(key, value []byte) error { return nil })
	})
}
