package ops

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/state"
)

// appendValueBytes encodes v for keyed state and grouping keys, without knowing its
// type: a flag byte says which fields are set, then only those follow (an INT takes a
// few bytes, not all the fields of value).
func appendValueBytes(dst []byte, v value) []byte {
	if v.null {
		return append(dst, 0)
	}
	flags := byte(flagValid)
	if v.i != 0 {
		flags |= flagInt
	}
	if v.f != 0 || math.Signbit(v.f) {
		flags |= flagFloat
	}
	if v.d != (decimal128.Num{}) {
		flags |= flagDecimal
	}
	if v.s != "" {
		flags |= flagString
	}
	dst = append(dst, flags)
	if flags&flagInt != 0 {
		dst = binary.AppendVarint(dst, v.i)
	}
	if flags&flagFloat != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.f))
	}
	if flags&flagDecimal != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, v.d.LowBits())
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v.d.HighBits()))
	}
	if flags&flagString != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(v.s)))
		dst = append(dst, v.s...)
	}
	return dst
}

// The flags of an encoded value.
const (
	flagValid = 1 << iota
	flagInt
	flagFloat
	flagDecimal
	flagString
)

// decoder reads what the append functions wrote; the first error sticks.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: truncated aggregate state", state.ErrCorrupt)
	}
	d.buf = nil
}

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.fail()
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.buf) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.buf)
	d.buf = d.buf[8:]
	return v
}

func (d *decoder) value() value {
	flags := d.byte()
	if flags&flagValid == 0 {
		return value{null: true}
	}
	var v value
	if flags&flagInt != 0 {
		v.i = d.varint()
	}
	if flags&flagFloat != 0 {
		v.f = math.Float64frombits(d.uint64())
	}
	if flags&flagDecimal != 0 {
		lo := d.uint64()
		v.d = decimal128.New(int64(d.uint64()), lo)
	}
	if flags&flagString != 0 {
		n, k := binary.Uvarint(d.buf)
		if k <= 0 || uint64(len(d.buf)-k) < n {
			d.fail()
			return value{}
		}
		v.s = string(d.buf[k : k+int(n)])
		d.buf = d.buf[k+int(n):]
	}
	return v
}

// appendCounts encodes a value multiset.
func appendCounts(dst []byte, m map[value]int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for v, n := range m {
		dst = appendValueBytes(dst, v)
		dst = binary.AppendVarint(dst, n)
	}
	return dst
}

func (d *decoder) counts() map[value]int64 {
	n, k := binary.Uvarint(d.buf)
	if k <= 0 || n > uint64(len(d.buf)) {
		d.fail()
		return nil
	}
	d.buf = d.buf[k:]
	if n == 0 {
		return nil
	}
	m := make(map[value]int64, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		v := d.value()
		m[v] = d.varint()
	}
	return m
}

// decodeRow appends the values that appendValueBytes wrote one after another into enc
// to dst. Their strings are slices of enc, so it allocates nothing but dst's growth. It
// trusts enc, which the operator wrote or checked (checkRow) when it restored it.
func decodeRow(enc string, dst []value) []value {
	for at := 0; at < len(enc); {
		flags := enc[at]
		at++
		if flags&flagValid == 0 {
			dst = append(dst, value{null: true})
			continue
		}
		var v value
		if flags&flagInt != 0 {
			u, n := uvarintString(enc[at:])
			v.i, at = int64(u>>1)^-int64(u&1), at+n
		}
		if flags&flagFloat != 0 {
			v.f, at = math.Float64frombits(le64(enc[at:])), at+8
		}
		if flags&flagDecimal != 0 {
			lo := le64(enc[at:])
			v.d, at = decimal128.New(int64(le64(enc[at+8:])), lo), at+16
		}
		if flags&flagString != 0 {
			n, k := uvarintString(enc[at:])
			at += k
			v.s, at = enc[at:at+int(n)], at+int(n)
		}
		dst = append(dst, v)
	}
	return dst
}

// uvarintString is binary.Uvarint over a string.
func uvarintString(s string) (uint64, int) {
	var x uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<(7*uint(i)), i + 1
		}
		x |= uint64(b&0x7f) << (7 * uint(i))
	}
	return 0, 0
}

// le64 reads a little-endian uint64 from the start of s.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
