package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// String functions whose per-row work (Unicode, regular expressions, hashing) dominates:
// each is a row loop over typed readers, writing into one reused string builder.

// regexCache compiles the patterns of a column once each; a pattern that does not compile
// is remembered as nil. It is bounded so that a column of distinct patterns cannot grow it.
type regexCache map[string]*regex

func (rc regexCache) get(p string) *regex {
	if re, ok := rc[p]; ok {
		return re
	}
	if len(rc) > 256 {
		clear(rc)
	}
	re, err := compileRegex(p)
	if err != nil {
		re = nil
	}
	rc[p] = re
	return re
}

// regexpKernel is REGEXP_EXTRACT, REGEXP_REPLACE, REGEXP, REGEXP_COUNT, REGEXP_INSTR and
// REGEXP_SUBSTR. A pattern (or a Java
// replacement) that does not work on a row gives NULL (REGEXP: FALSE), as Flink does; the
// planner has refused constant patterns Go cannot run.
func regexpKernel(fn planner.Func) kernelFn {
	rc := regexCache{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		switch fn {
		case planner.FnRegexp:
			return boolRows(c, n, args, func(i int) (bool, bool, error) {
				pat := p.at(i)
				if pat == "" {
					return false, true, nil
				}
				re := rc.get(pat)
				return re != nil && re.matches(s.at(i)), true, nil
			})
		case planner.FnRegexpCount, planner.FnRegexpInstr:
			return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
				re := rc.get(p.at(i))
				if re == nil {
					return 0, false, nil
				}
				v := s.at(i)
				if !re.mayMatch(v) {
					return 0, true, nil
				}
				if fn == planner.FnRegexpCount {
					return int32(len(re.FindAllStringIndex(v, -1))), true, nil
				}
				m := re.index(v)
				if m == nil {
					return 0, true, nil
				}
				return int32(runeCount(v[:m[0]]) + 1), true, nil
			})
		case planner.FnRegexpSubstr:
			return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
				re := rc.get(p.at(i))
				if re == nil {
					return dst, false, nil
				}
				v := s.at(i)
				m := re.index(v)
				if m == nil {
					return dst, false, nil
				}
				return append(dst, v[m[0]:m[1]]...), true, nil
			})
		case planner.FnRegexpExtract:
			idx := intCol{s: 1, scalar: true}
			if len(args) > 2 {
				idx = intColOf(args[2])
			}
			return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
				re := rc.get(p.at(i))
				k := idx.at(i)
				if re == nil || k < 0 || k > int64(re.NumSubexp()) {
					return dst, false, nil
				}
				v := s.at(i)
				m := re.submatchIndex(v)
				if m == nil || m[2*k] < 0 {
					return dst, false, nil
				}
				return append(dst, v[m[2*k]:m[2*k+1]]...), true, nil
			})
		}
		repl := strColOf(args[2])
		var tmpl, tmplFor string
		tmplGroups, tmplOK := -1, false
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			re := rc.get(p.at(i))
			if re == nil {
				return dst, false, nil
			}
			if r := repl.at(i); r != tmplFor || re.NumSubexp() != tmplGroups {
				tmpl, tmplOK = javaReplacement(r, re.Regexp)
				tmplFor, tmplGroups = r, re.NumSubexp()
			}
			if !tmplOK {
				return dst, false, nil
			}
			v := s.at(i)
			if !re.mayMatch(v) {
				return append(dst, v...), true, nil
			}
			last := 0
			for _, m := range re.FindAllStringSubmatchIndex(v, -1) {
				dst = append(dst, v[last:m[0]]...)
				dst = re.ExpandString(dst, tmpl, v, m)
				last = m[1]
			}
			return append(dst, v[last:]...), true, nil
		})
	}
}

// javaReplacement turns a Java replacement string (Matcher.replaceAll: $n group references
// taking digits while the group exists, ${name} a named group, \x a literal x) into a Go Expand template; false
// when Java would refuse it (a trailing \ or $, a $ without a group number).
func javaReplacement(r string, re *regexp.Regexp) (string, bool) {
	if !strings.ContainsAny(r, `$\`) {
		return r, true
	}
	groups := re.NumSubexp()
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		switch ch := r[i]; ch {
		case '\\':
			i++
			if i >= len(r) {
				return "", false
			}
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case '$':
			i++
			if i >= len(r) {
				return "", false
			}
			if r[i] == '{' {
				end := strings.IndexByte(r[i:], '}')
				if end < 0 || re.SubexpIndex(r[i+1:i+end]) < 0 {
					return "", false
				}
				b.WriteString("$" + r[i:i+end+1])
				i += end
				continue
			}
			if r[i] < '0' || r[i] > '9' {
				return "", false
			}
			g := int(r[i] - '0')
			for i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9' && g*10+int(r[i+1]-'0') <= groups {
				i++
				g = g*10 + int(r[i]-'0')
			}
			if g > groups {
				return "", false
			}
			b.WriteString("${" + strconv.Itoa(g) + "}")
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), true
}

// splitIndexKernel is SPLIT_INDEX(s, delimiter, k): the k-th (0-based) piece of s split on
// the delimiter text; NULL when k is negative or past the last piece.
func splitIndexKernel(c *ctx, n int, args []datum) (datum, error) {
	s, d, k := strColOf(args[0]), strColOf(args[1]), intColOf(args[2])
	return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		v, sep, idx := s.at(i), d.at(i), k.at(i)
		if idx < 0 || v == "" {
			return dst, false, nil
		}
		if sep == "" {
			if idx == 0 {
				return append(dst, v...), true, nil
			}
			return dst, false, nil
		}
		for ; idx > 0; idx-- {
			j := strings.Index(v, sep)
			if j < 0 {
				return dst, false, nil
			}
			v = v[j+len(sep):]
		}
		if j := strings.Index(v, sep); j >= 0 {
			v = v[:j]
		}
		return append(dst, v...), true, nil
	})
}

// padKernel is LPAD (left) and RPAD(s, length, pad), in characters: s cut or padded with
// repeats of pad to length; NULL when length is negative or pad empty, as Flink.
func padKernel(left bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, l, p := strColOf(args[0]), intColOf(args[1]), strColOf(args[2])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			v, length, pad := s.at(i), l.at(i), p.at(i)
			if length < 0 || pad == "" {
				return dst, false, nil
			}
			if length > 1<<28 {
				return dst, false, newError(ErrInvalidArgument, "%s length %d is too large", map[bool]string{true: "LPAD", false: "RPAD"}[left], length)
			}
			chars := int64(runeCount(v))
			if chars >= length {
				return append(dst, v[:charOffset(v, int(length))]...), true, nil
			}
			fill := func(dst []byte, k int64) []byte {
				for k > 0 {
					for _, r := range pad {
						if k == 0 {
							break
						}
						dst = utf8.AppendRune(dst, r)
						k--
					}
				}
				return dst
			}
			if left {
				dst = fill(dst, length-chars)
				return append(dst, v...), true, nil
			}
			return fill(append(dst, v...), length-chars), true, nil
		})
	}
}

// repeatKernel is REPEAT(s, k): s k times, ” when k <= 0.
func repeatKernel(c *ctx, n int, args []datum) (datum, error) {
	s, k := strColOf(args[0]), intColOf(args[1])
	return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		v, times := s.at(i), k.at(i)
		if times <= 0 || v == "" {
			return dst, true, nil
		}
		if int64(len(v))*times > 1<<28 {
			return dst, false, newError(ErrInvalidArgument, "REPEAT result of %d bytes is too large", int64(len(v))*times)
		}
		for ; times > 0; times-- {
			dst = append(dst, v...)
		}
		return dst, true, nil
	})
}

// mapStringKernel is a STRING -> STRING function of one argument applied row by row.
func mapStringKernel(f func(dst []byte, s string) []byte) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			return f(dst, s.at(i)), true, nil
		})
	}
}

func reverseString(dst []byte, s string) []byte {
	for len(s) > 0 {
		r, w := utf8.DecodeLastRuneInString(s)
		dst = utf8.AppendRune(dst, r)
		s = s[:len(s)-w]
	}
	return dst
}

// initCap upper-cases the first letter or digit of each run of them and lower-cases the rest.
func initCap(dst []byte, s string) []byte {
	start := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start {
				r = unicode.ToUpper(r)
			} else {
				r = unicode.ToLower(r)
			}
			start = false
		} else {
			start = true
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// translateKernel is TRANSLATE(s, from, to): each character of from becomes the character
// at its position in to, or is removed when to is shorter.
func translateKernel() kernelFn {
	m := map[rune]rune{}
	var mFrom, mTo string
	mSet := false
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, from, to := strColOf(args[0]), strColOf(args[1]), strColOf(args[2])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			if f, t := from.at(i), to.at(i); !mSet || f != mFrom || t != mTo {
				clear(m)
				tr := []rune(t)
				k := 0
				for _, r := range f {
					if _, seen := m[r]; !seen {
						if k < len(tr) {
							m[r] = tr[k]
						} else {
							m[r] = -1
						}
					}
					k++
				}
				mFrom, mTo, mSet = f, t, true
			}
			for _, r := range s.at(i) {
				if to, ok := m[r]; ok {
					if to < 0 {
						continue
					}
					r = to
				}
				dst = utf8.AppendRune(dst, r)
			}
			return dst, true, nil
		})
	}
}

// concatWSKernel is CONCAT_WS(sep, s...): the non-NULL strings joined by sep; NULL only when
// sep is.
func concatWSKernel(c *ctx, n int, args []datum) (datum, error) {
	cols := make([]strCol, len(args))
	valid := make([][]byte, len(args))
	offs := make([]int, len(args))
	for k := range args {
		cols[k] = strColOf(args[k])
		if a := args[k].arr; a != nil && a.NullN() > 0 {
			valid[k], offs[k] = arrowbuf.Validity(a)
		}
	}
	isNull := func(k, i int) bool {
		if args[k].arr == nil {
			return args[k].null
		}
		return valid[k] != nil && !bitAt(valid[k], offs[k]+i)
	}
	hint := 0
	for k := range args {
		hint += dataLen(args[k], n)
	}
	return strRows(c, n, args[:1], hint, func(i int, dst []byte) ([]byte, bool, error) {
		if isNull(0, i) {
			return dst, false, nil
		}
		sep, first := cols[0].at(i), true
		for k := 1; k < len(args); k++ {
			if isNull(k, i) {
				continue
			}
			if !first {
				dst = append(dst, sep...)
			}
			dst = append(dst, cols[k].at(i)...)
			first = false
		}
		return dst, true, nil
	})
}

// leftRightKernel is LEFT (left) or RIGHT(s, k): the first or last k characters, ” when k
// is negative.
func leftRightKernel(left bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, k := strColOf(args[0]), intColOf(args[1])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			v, m := s.at(i), k.at(i)
			if m <= 0 {
				return dst, true, nil
			}
			chars := int64(runeCount(v))
			if m >= chars {
				return append(dst, v...), true, nil
			}
			if left {
				return append(dst, v[:charOffset(v, int(m))]...), true, nil
			}
			return append(dst, v[charOffset(v, int(chars-m)):]...), true, nil
		})
	}
}

// instrKernel is INSTR(s, sub): the 1-based character position of sub in s, 0 if absent.
func instrKernel(c *ctx, n int, args []datum) (datum, error) {
	s, sub := strColOf(args[0]), strColOf(args[1])
	return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
		v := s.at(i)
		k := strings.Index(v, sub.at(i))
		if k < 0 {
			return 0, true, nil
		}
		return int32(runeCount(v[:k]) + 1), true, nil
	})
}

// asciiKernel is ASCII(s): the code of the first character, 0 for ”.
func asciiKernel(c *ctx, n int, args []datum) (datum, error) {
	s := strColOf(args[0])
	return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
		r, _ := utf8.DecodeRuneInString(s.at(i))
		if r == utf8.RuneError {
			return 0, true, nil
		}
		return int32(r), true, nil
	})
}

// chrKernel is CHR(k): the character with code k mod 256 (” for a negative k), as Flink.
func chrKernel(c *ctx, n int, args []datum) (datum, error) {
	k := intColOf(args[0])
	return strRows(c, n, args, 2*n, func(i int, dst []byte) ([]byte, bool, error) {
		v := k.at(i)
		if v < 0 {
			return dst, true, nil
		}
		return utf8.AppendRune(dst, rune(v&0xff)), true, nil
	})
}

// base64Kernel is TO_BASE64 (encode) and FROM_BASE64, of the UTF-8 bytes; text that is not
// base64 decodes to NULL.
func base64Kernel(encode bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		return strRows(c, n, args, dataLen(args[0], n)*4/3+4*n, func(i int, dst []byte) ([]byte, bool, error) {
			v := s.at(i)
			if encode {
				return base64.StdEncoding.AppendEncode(dst, []byte(v)), true, nil
			}
			out, err := base64.StdEncoding.AppendDecode(dst, []byte(v))
			if err != nil || !utf8.Valid(out[len(dst):]) {
				return dst, false, nil
			}
			return out, true, nil
		})
	}
}

// hashKernel is MD5, SHA1, SHA224, SHA256, SHA384, SHA512 and SHA2(s, bits): the lower-case
// hex digest of the UTF-8 bytes. SHA2 with bits other than 224, 256, 384 or 512 (0 meaning
// 256) gives NULL.
func hashKernel(fn planner.Func) kernelFn {
	hashers := map[int64]hash.Hash{}
	get := func(bits int64) hash.Hash {
		if h, ok := hashers[bits]; ok {
			h.Reset()
			return h
		}
		var h hash.Hash
		switch bits {
		case 1:
			h = md5.New()
		case 160:
			h = sha1.New()
		case 224:
			h = sha256.New224()
		case 0, 256:
			h = sha256.New()
		case 384:
			h = sha512.New384()
		case 512:
			h = sha512.New()
		default:
			return nil
		}
		hashers[bits] = h
		return h
	}
	fixedBits := map[planner.Func]int64{planner.FnMD5: 1, planner.FnSHA1: 160, planner.FnSHA224: 224,
		planner.FnSHA256: 256, planner.FnSHA384: 384, planner.FnSHA512: 512}[fn]
	hexLen := map[int64]int{1: 32, 160: 40, 224: 56, 256: 64, 384: 96, 512: 128}[fixedBits]
	if hexLen == 0 {
		hexLen = 128 // SHA2: as long as its longest
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		bits := intCol{s: fixedBits, scalar: true}
		if fn == planner.FnSHA2 {
			bits = intColOf(args[1])
		}
		var sum [64]byte
		return strRows(c, n, args, hexLen*n, func(i int, dst []byte) ([]byte, bool, error) {
			h := get(bits.at(i))
			if h == nil {
				return dst, false, nil
			}
			v := s.at(i)
			h.Write(unsafe.Slice(unsafe.StringData(v), len(v))) // read only, no copy
			return hex.AppendEncode(dst, h.Sum(sum[:0])), true, nil
		})
	}
}
