package expr

import (
	"encoding/binary"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/planner"
)

func stringKernel(fn planner.Func, argT []planner.Type) (kernelFn, error) {
	for i, t := range argT {
		want := planner.String
		if fn == planner.FnSubstring && i > 0 {
			want = planner.Int
		}
		if t.Kind != want && t.Kind != planner.Null {
			return nil, newError(ErrUnsupported, "%s argument %d is %s, want %s", fn, i+1, t, planner.Type{Kind: want})
		}
	}
	switch fn {
	case planner.FnConcat:
		return concatKernel, nil
	case planner.FnUpper:
		return caseKernel(true), nil
	case planner.FnLower:
		return caseKernel(false), nil
	case planner.FnSubstring:
		return substringKernel, nil
	case planner.FnCharLength:
		return charLengthKernel, nil
	case planner.FnTrim, planner.FnLTrim, planner.FnRTrim:
		return trimKernel(fn), nil
	case planner.FnReplace:
		if len(argT) != 3 {
			return nil, newError(ErrUnsupported, "REPLACE takes 3 arguments, got %d", len(argT))
		}
		return replaceKernel, nil
	case planner.FnPosition:
		return positionKernel, nil
	}
	return nil, newError(ErrUnsupported, "unsupported function %s", fn)
}

// dataLen is the number of value bytes of a STRING datum (a scalar counts once per row).
func dataLen(d datum, n int) int {
	if d.arr == nil {
		return len(d.s) * n
	}
	c := strColOf(d)
	if len(c.offs) == 0 {
		return 0
	}
	return int(c.offs[len(c.offs)-1] - c.offs[0])
}

// concatKernel is CONCAT and ||: NULL when any argument is NULL.
func concatKernel(c *ctx, n int, args []datum) (datum, error) {
	cols := make([]strCol, len(args))
	hint := 0
	for i := range args {
		cols[i] = strColOf(args[i])
		hint += dataLen(args[i], n)
	}
	vbuf := andValidity(c.mem, n, args)
	var valid []byte
	if vbuf != nil {
		valid = vbuf.Bytes()
	}
	sb := newStrBuilder(c.mem, n, hint)
	for i := 0; i < n; i++ {
		if valid == nil || bitAt(valid, i) {
			for k := range cols {
				sb.appendString(cols[k].at(i))
			}
		}
		sb.endRow(i)
	}
	return arrDatum(sb.finish(vbuf), true), nil
}

// caseKernel is UPPER (upper) or LOWER. When every byte is ASCII it maps the whole value
// buffer eight bytes at a time and rebases the offsets; otherwise it maps rune by rune.
func caseKernel(upper bool) kernelFn {
	var table [256]byte
	for i := range table {
		b := byte(i)
		switch {
		case upper && 'a' <= b && b <= 'z':
			b -= 'a' - 'A'
		case !upper && 'A' <= b && b <= 'Z':
			b += 'a' - 'A'
		}
		table[i] = b
	}
	mapRune := unicode.ToLower
	lo, hi := byte('A'), byte('Z')
	if upper {
		mapRune = unicode.ToUpper
		lo, hi = 'a', 'z'
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		col := strColOf(args[0])
		vbuf := andValidity(c.mem, n, args)
		var data []byte
		if n > 0 {
			data = col.data[col.offs[0]:col.offs[n]]
		}
		sb := newStrBuilder(c.mem, n, len(data))
		if n > 0 && mapASCIICase(sb.d[:len(data)], data, lo, hi) {
			base := col.offs[0]
			for i := 0; i <= n; i++ {
				sb.offs[i] = col.offs[i] - base
			}
			sb.d = sb.d[:len(data)]
			return arrDatum(sb.finish(vbuf), true), nil
		}
		for i := 0; i < n; i++ {
			s := col.at(i)
			sb.grow(len(s))
			for j := 0; j < len(s); {
				if b := s[j]; b < utf8.RuneSelf {
					sb.d = append(sb.d, table[b])
					j++
					continue
				}
				r, w := utf8.DecodeRuneInString(s[j:])
				j += w
				sb.grow(utf8.UTFMax)
				if upper && r == 'ß' { // the one full case mapping users meet: Java gives SS
					sb.d = append(sb.d, "SS"...)
					continue
				}
				sb.d = utf8.AppendRune(sb.d, mapRune(r))
			}
			sb.endRow(i)
		}
		return arrDatum(sb.finish(vbuf), true), nil
	}
}

// mapASCIICase writes src to dst with the letters lo..hi flipped to the other case, eight
// bytes at a time; it reports false (dst unspecified) when src is not all ASCII.
func mapASCIICase(dst, src []byte, lo, hi byte) bool {
	const high = 0x8080808080808080
	addLo := 0x0101010101010101 * uint64(0x80-lo)
	addHi := 0x0101010101010101 * uint64(0x80-hi-1)
	i := 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.LittleEndian.Uint64(src[i:])
		if w&high != 0 {
			return false
		}
		// A byte's high bit becomes set in w+addLo when it is >= lo, and in w+addHi when it is
		// > hi; with every byte below 0x80 no addition carries into the next byte.
		m := (w + addLo) &^ (w + addHi) & high
		binary.LittleEndian.PutUint64(dst[i:], w^(m>>2))
	}
	for ; i < len(src); i++ {
		b := src[i]
		if b >= utf8.RuneSelf {
			return false
		}
		if lo <= b && b <= hi {
			b ^= 0x20
		}
		dst[i] = b
	}
	return true
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func runeCount(s string) int {
	if isASCIIString(s) {
		return len(s)
	}
	return utf8.RuneCountInString(s)
}

// charOffset returns the byte offset of character k of s (len(s) past the end).
func charOffset(s string, k int) int {
	if k <= 0 {
		return 0
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}

// substring is Flink's SUBSTRING: 1-based in characters, 0 counts as 1, a negative start
// counts from the end; a negative length gives NULL.
func substring(s string, pos, length int64) (string, bool) {
	if length < 0 {
		return "", false
	}
	if s == "" {
		return "", true
	}
	chars := int64(runeCount(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
		if start >= chars {
			return "", true
		}
	case pos < 0:
		start = chars + pos
		if start < 0 {
			return "", true
		}
	}
	end := chars
	if chars-start >= length {
		end = start + length
	}
	if int(chars) == len(s) {
		return s[start:end], true
	}
	b0 := charOffset(s, int(start))
	b1 := b0 + charOffset(s[b0:], int(end-start))
	return s[b0:b1], true
}

func substringKernel(c *ctx, n int, args []datum) (datum, error) {
	s, pos := strColOf(args[0]), intColOf(args[1])
	length := intCol{s: 1<<31 - 1, scalar: true}
	if len(args) > 2 {
		length = intColOf(args[2])
	}
	return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		r, ok := substring(s.at(i), pos.at(i), length.at(i))
		return append(dst, r...), ok, nil
	})
}

func charLengthKernel(c *ctx, n int, args []datum) (datum, error) {
	s := strColOf(args[0])
	vbuf := andValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocFixed[int32](c.mem, n)
	for i := range out {
		out[i] = int32(runeCount(s.at(i)))
	}
	return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Int32, n, vbuf, buf, array.UnknownNullCount), true), nil
}

// trimKernel is TRIM, LTRIM and RTRIM: it removes the characters of the set (default a
// space) from both ends, the start or the end.
func trimKernel(fn planner.Func) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		set := strCol{s: " ", scalar: true}
		if len(args) > 1 {
			set = strColOf(args[1])
		}
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			v, cut := s.at(i), set.at(i)
			switch fn {
			case planner.FnLTrim:
				v = strings.TrimLeft(v, cut)
			case planner.FnRTrim:
				v = strings.TrimRight(v, cut)
			default:
				v = strings.Trim(v, cut)
			}
			return append(dst, v...), true, nil
		})
	}
}

// replaceKernel is REPLACE(s, search, replacement), replacing every occurrence; an empty
// search inserts the replacement between characters, as Java's String.replace.
func replaceKernel(c *ctx, n int, args []datum) (datum, error) {
	s, from, to := strColOf(args[0]), strColOf(args[1]), strColOf(args[2])
	return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		v, old, repl := s.at(i), from.at(i), to.at(i)
		if old == "" {
			return append(dst, strings.ReplaceAll(v, old, repl)...), true, nil
		}
		for {
			k := strings.Index(v, old)
			if k < 0 {
				return append(dst, v...), true, nil
			}
			dst = append(dst, v[:k]...)
			dst = append(dst, repl...)
			v = v[k+len(old):]
		}
	})
}

// positionKernel is POSITION(needle IN haystack): the 1-based character index, 0 if absent.
func positionKernel(c *ctx, n int, args []datum) (datum, error) {
	needle, hay := strColOf(args[0]), strColOf(args[1])
	vbuf := andValidity(c.mem, n, args)
	buf, out := arrowbuf.AllocFixed[int32](c.mem, n)
	for i := range out {
		h := hay.at(i)
		k := strings.Index(h, needle.at(i))
		if k < 0 {
			out[i] = 0
		} else {
			out[i] = int32(runeCount(h[:k]) + 1)
		}
	}
	return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Int32, n, vbuf, buf, array.UnknownNullCount), true), nil
}
