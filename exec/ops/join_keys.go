package ops

import "iter"

// keyIndex finds a join side's keys by their encoding. Encodings of up to 15 bytes (an
// integer key, a short string) are kept as fixed arrays, which a lookup compares without
// following a pointer to the key's bytes: a regular join over a million keys (q7's
// prices) spent a fifth of its time in that lookup.
type keyIndex struct {
	short map[shortKey]*joinKey
	long  map[string]*joinKey
}

// shortKey is an encoding's length and then its bytes.
type shortKey [16]byte

func shortKeyOf(enc string) (k shortKey, ok bool) {
	if len(enc) >= len(k) {
		return k, false
	}
	k[0] = byte(len(enc))
	copy(k[1:], enc)
	return k, true
}

func newKeyIndex() keyIndex {
	return keyIndex{short: map[shortKey]*joinKey{}, long: map[string]*joinKey{}}
}

func (x keyIndex) get(enc string) *joinKey {
	if sk, ok := shortKeyOf(enc); ok {
		return x.short[sk]
	}
	return x.long[enc]
}

func (x keyIndex) put(k *joinKey) {
	if sk, ok := shortKeyOf(k.enc); ok {
		x.short[sk] = k
	} else {
		x.long[k.enc] = k
	}
}

func (x keyIndex) remove(enc string) {
	if sk, ok := shortKeyOf(enc); ok {
		delete(x.short, sk)
	} else {
		delete(x.long, enc)
	}
}

func (x keyIndex) len() int { return len(x.short) + len(x.long) }

// all yields every key; the loop may remove the key it is given.
func (x keyIndex) all() iter.Seq[*joinKey] {
	return func(yield func(*joinKey) bool) {
		for _, k := range x.short {
			if !yield(k) {
				return
			}
		}
		for _, k := range x.long {
			if !yield(k) {
				return
			}
		}
	}
}
