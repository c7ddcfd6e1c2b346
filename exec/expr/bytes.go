package expr

import (
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// bytesAt reads row i of a BYTES or STRING datum.
func bytesAt(d datum, i int) string {
	switch a := d.arr.(type) {
	case *array.Binary:
		return string(a.Value(i))
	case *array.String:
		return a.Value(i)
	}
	return d.s
}

// charsets are the character sets ENCODE and DECODE take, as Java names them.
var charsets = []string{"US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16"}

func charsetOf(name string) (string, error) {
	for _, cs := range charsets {
		if strings.EqualFold(strings.TrimSpace(name), cs) {
			return cs, nil
		}
	}
	return "", newError(ErrInvalidArgument, "unsupported character set %q: use one of %s", name, strings.Join(charsets, ", "))
}

// encodeKernel is ENCODE(s, charset): s's bytes in charset; a character the set lacks
// becomes '?', as Java's encoder writes it. UTF-16 starts with a big-endian byte-order
// mark.
func encodeKernel(to planner.Type) kernelFn {
	dt := exec.ArrowType(to)
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, cs := strColOf(args[0]), strColOf(args[1])
		d, err := strRows(c, n, args, 2*dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			set, err := charsetOf(cs.at(i))
			if err != nil {
				return dst, false, err
			}
			text := s.at(i)
			switch set {
			case "UTF-8":
				return append(dst, text...), true, nil
			case "US-ASCII", "ISO-8859-1":
				limit := rune(0x7f)
				if set == "ISO-8859-1" {
					limit = 0xff
				}
				for _, r := range text {
					if r > limit {
						r = '?'
					}
					dst = append(dst, byte(r))
				}
				return dst, true, nil
			}
			units := utf16.Encode([]rune(text))
			little := set == "UTF-16LE"
			if set == "UTF-16" {
				dst = append(dst, 0xfe, 0xff)
			}
			for _, u := range units {
				if little {
					dst = append(dst, byte(u), byte(u>>8))
				} else {
					dst = append(dst, byte(u>>8), byte(u))
				}
			}
			return dst, true, nil
		})
		if err != nil {
			return d, err
		}
		out := relabel(d.arr, dt)
		d.release()
		return arrDatum(out, true), nil
	}
}

// decodeKernel is DECODE(bytes, charset): the text bytes hold in charset; bytes that
// are not valid in it become U+FFFD, as Java's decoder reads them. UTF-16 reads a
// byte-order mark, big-endian without one.
func decodeKernel(c *ctx, n int, args []datum) (datum, error) {
	cs := strColOf(args[1])
	return strRows(c, n, args, 16*n, func(i int, dst []byte) ([]byte, bool, error) {
		set, err := charsetOf(cs.at(i))
		if err != nil {
			return dst, false, err
		}
		b := bytesAt(args[0], i)
		switch set {
		case "UTF-8":
			return append(dst, strings.ToValidUTF8(b, "\uFFFD")...), true, nil
		case "US-ASCII", "ISO-8859-1":
			for k := 0; k < len(b); k++ {
				r := rune(b[k])
				if set == "US-ASCII" && r > 0x7f {
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
			}
			return dst, true, nil
		}
		little := set == "UTF-16LE"
		if set == "UTF-16" && len(b) >= 2 {
			switch {
			case b[0] == 0xfe && b[1] == 0xff:
				b = b[2:]
			case b[0] == 0xff && b[1] == 0xfe:
				b, little = b[2:], true
			}
		}
		units := make([]uint16, 0, len(b)/2)
		for k := 0; k+1 < len(b); k += 2 {
			if little {
				units = append(units, uint16(b[k])|uint16(b[k+1])<<8)
			} else {
				units = append(units, uint16(b[k])<<8|uint16(b[k+1]))
			}
		}
		for _, r := range utf16.Decode(units) {
			dst = utf8.AppendRune(dst, r)
		}
		if len(b)%2 == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
		return dst, true, nil
	})
}

// unhexKernel is UNHEX(s): the bytes s spells in hexadecimal digits (either case); an
// odd count gets a leading zero digit; NULL when s holds anything else.
func unhexKernel(to planner.Type) kernelFn {
	dt := exec.ArrowType(to)
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		d, err := strRows(c, n, args, dataLen(args[0], n)/2, func(i int, dst []byte) ([]byte, bool, error) {
			text := s.at(i)
			if len(text)%2 == 1 {
				text = "0" + text
			}
			out, err := hex.AppendDecode(dst, []byte(text))
			return out, err == nil, nil
		})
		if err != nil {
			return d, err
		}
		out := relabel(d.arr, dt)
		d.release()
		return arrDatum(out, true), nil
	}
}

// printfKernel is PRINTF(format, args...): Java's String.format over the arguments,
// for the conversions %s %S %d %x %X %o %f %e %E %g %b %c %n %% with flags, width and
// precision. A NULL argument prints as "null"; a NULL format is NULL.
func printfKernel(argT []planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		vals := make([]*formatArg, len(args)-1)
		for k := range vals {
			arr := asArray(c, argT[k+1], args[k+1], n)
			defer arr.Release()
			vals[k] = &formatArg{arr: arr, t: argT[k+1], c: c}
		}
		fm := strColOf(args[0])
		return strRows(c, n, args[:1], 16*n, func(i int, dst []byte) ([]byte, bool, error) {
			for _, v := range vals {
				v.row = i
			}
			return javaFormat(dst, fm.at(i), vals)
		})
	}
}

// formatArg is row row of a PRINTF argument.
type formatArg struct {
	arr arrow.Array
	t   planner.Type
	row int
	c   *ctx
}

// text is the argument as %s prints it: as a cast to STRING does, "null" for NULL.
func (a *formatArg) text() string {
	if a.arr.IsNull(a.row) {
		return "null"
	}
	return format.FormatValue(a.arr, a.row, a.c.loc)
}

// javaFormat appends format f applied to args; an error names what does not fit.
func javaFormat(dst []byte, f string, args []*formatArg) ([]byte, bool, error) {
	next := 0
	for k := 0; k < len(f); k++ {
		if f[k] != '%' {
			dst = append(dst, f[k])
			continue
		}
		end := k + 1
		for end < len(f) && strings.IndexByte("-#+ 0,(.123456789", f[end]) >= 0 {
			end++
		}
		if end >= len(f) {
			return dst, false, newError(ErrInvalidArgument, "PRINTF format %q ends inside a conversion", f)
		}
		spec, conv := f[k+1:end], f[end]
		k = end
		switch conv {
		case '%':
			dst = append(dst, '%')
			continue
		case 'n':
			dst = append(dst, '\n')
			continue
		}
		if next >= len(args) {
			return dst, false, newError(ErrInvalidArgument, "PRINTF format %q needs more arguments than the %d given", f, len(args))
		}
		a := args[next]
		next++
		goSpec := "%" + strings.ReplaceAll(spec, ",", "")
		if a.arr.IsNull(a.row) && conv != 'b' {
			dst = fmt.Appendf(dst, strings.TrimRight(goSpec, ".0123456789")+"s", "null")
			continue
		}
		switch conv {
		case 's', 'S':
			s := a.text()
			if conv == 'S' {
				s = strings.ToUpper(s)
			}
			dst = fmt.Appendf(dst, goSpec+"s", s)
		case 'b', 'B':
			v := !a.arr.IsNull(a.row)
			if b, ok := a.arr.(*array.Boolean); ok && v {
				v = b.Value(a.row)
			}
			dst = fmt.Appendf(dst, goSpec+"t", v)
		case 'd', 'x', 'X', 'o':
			i, ok := integerAt(a)
			if !ok {
				return dst, false, newError(ErrInvalidArgument, "PRINTF %%%c takes an integer, got %s", conv, a.t)
			}
			dst = fmt.Appendf(dst, goSpec+string(conv), i)
		case 'f', 'e', 'E', 'g', 'G':
			v, ok := floatAt(a)
			if !ok {
				return dst, false, newError(ErrInvalidArgument, "PRINTF %%%c takes a number, got %s", conv, a.t)
			}
			if !strings.Contains(spec, ".") {
				goSpec += ".6" // Java's default precision
			}
			dst = fmt.Appendf(dst, goSpec+string(conv), v)
		case 'c':
			i, ok := integerAt(a)
			if !ok {
				return dst, false, newError(ErrInvalidArgument, "PRINTF %%c takes a code point, got %s", a.t)
			}
			dst = fmt.Appendf(dst, goSpec+"c", rune(i))
		default:
			return dst, false, newError(ErrInvalidArgument, "PRINTF conversion %%%c is not supported", conv)
		}
	}
	return dst, true, nil
}

// integerAt reads an integer argument.
func integerAt(a *formatArg) (int64, bool) {
	switch v := a.arr.(type) {
	case *array.Int8:
		return int64(v.Value(a.row)), true
	case *array.Int16:
		return int64(v.Value(a.row)), true
	case *array.Int32:
		return int64(v.Value(a.row)), true
	case *array.Int64:
		return v.Value(a.row), true
	}
	return 0, false
}

// floatAt reads a numeric argument as a double.
func floatAt(a *formatArg) (float64, bool) {
	switch v := a.arr.(type) {
	case *array.Float32:
		return float64(v.Value(a.row)), true
	case *array.Float64:
		return v.Value(a.row), true
	case *array.Decimal128:
		return v.Value(a.row).ToFloat64(int32(a.t.Scale)), true
	}
	i, ok := integerAt(a)
	return float64(i), ok
}
