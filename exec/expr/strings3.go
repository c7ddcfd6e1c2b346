package expr

import (
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// isCharsKernel is IS_ALPHA (letters) and IS_DIGIT (digits): TRUE when the string is not
// empty and every character is one; FALSE for NULL, as Flink.
func isCharsKernel(ok func(rune) bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		return predicateRows(c, n, args[0], func(s string) bool {
			if s == "" {
				return false
			}
			for _, r := range s {
				if !ok(r) {
					return false
				}
			}
			return true
		})
	}
}

// isDecimalKernel is IS_DECIMAL: TRUE when the string is a decimal number (sign, digits,
// an optional fraction and exponent); FALSE for NULL.
func isDecimalKernel(c *ctx, n int, args []datum) (datum, error) {
	return predicateRows(c, n, args[0], isDecimalText)
}

func isDecimalText(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// predicateRows is a never-NULL BOOLEAN of a STRING datum, FALSE where it is NULL.
func predicateRows(c *ctx, n int, d datum, f func(string) bool) (datum, error) {
	buf, out := arrowbuf.AllocBits(c.mem, n)
	if d.arr == nil {
		if !d.null && f(d.s) {
			for i := 0; i < n; i++ {
				setBit(out, i)
			}
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, nil, buf, 0), true), nil
	}
	s := strColOf(d)
	for i := 0; i < n; i++ {
		if d.arr.IsValid(i) && f(s.at(i)) {
			setBit(out, i)
		}
	}
	return arrDatum(arrowbuf.NewArray(boolType, n, nil, buf, 0), true), nil
}

var (
	isAlphaKernel = isCharsKernel(unicode.IsLetter)
	isDigitKernel = isCharsKernel(unicode.IsDigit)
)

// locateKernel is LOCATE(needle, haystack[, from]): the 1-based character position of the
// first needle at or after character from (default 1), 0 if absent or from < 1.
func locateKernel(c *ctx, n int, args []datum) (datum, error) {
	needle, hay := strColOf(args[0]), strColOf(args[1])
	from := intCol{s: 1, scalar: true}
	if len(args) > 2 {
		from = intColOf(args[2])
	}
	return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
		h, k := hay.at(i), from.at(i)
		if k < 1 || k > int64(runeCount(h))+1 {
			return 0, true, nil
		}
		skip := charOffset(h, int(k-1))
		j := strings.Index(h[skip:], needle.at(i))
		if j < 0 {
			return 0, true, nil
		}
		return int32(k) + int32(runeCount(h[skip:skip+j])), true, nil
	})
}

// eltKernel is ELT(k, v1, v2, ...): the k-th value (1-based), NULL when k is out of range
// or NULL.
func eltKernel(c *ctx, n int, args []datum) (datum, error) {
	k := intColOf(args[0])
	cols := make([]strCol, len(args)-1)
	for j := range cols {
		cols[j] = strColOf(args[j+1])
	}
	return strRows(c, n, args[:1], dataLen(args[1], n), func(i int, dst []byte) ([]byte, bool, error) {
		idx := k.at(i)
		if idx < 1 || idx > int64(len(cols)) {
			return dst, false, nil
		}
		a := args[idx]
		if a.arr == nil && a.null || a.arr != nil && a.arr.IsNull(i) {
			return dst, false, nil
		}
		return append(dst, cols[idx-1].at(i)...), true, nil
	})
}

// urlKernel is URL_ENCODE (encode) and URL_DECODE: application/x-www-form-urlencoded, as
// Java's URLEncoder and URLDecoder; text that does not decode gives NULL.
func urlKernel(encode bool) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		s := strColOf(args[0])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			if encode {
				return append(dst, url.QueryEscape(s.at(i))...), true, nil
			}
			v, err := url.QueryUnescape(s.at(i))
			if err != nil {
				return dst, false, nil
			}
			return append(dst, v...), true, nil
		})
	}
}

// parseURLKernel is PARSE_URL(url, part[, key]): a part of the URL as Java's URL names it
// (HOST, PATH, QUERY, REF, PROTOCOL, AUTHORITY, FILE, USERINFO), or with a key the value of
// that query parameter; NULL when the URL does not parse or lacks the part.
func parseURLKernel(c *ctx, n int, args []datum) (datum, error) {
	s, part := strColOf(args[0]), strColOf(args[1])
	var key strCol
	withKey := len(args) > 2
	if withKey {
		key = strColOf(args[2])
	}
	return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
		u, err := url.Parse(s.at(i))
		if err != nil || u.Scheme == "" {
			return dst, false, nil
		}
		var v string
		switch strings.ToUpper(part.at(i)) {
		case "HOST":
			v = u.Hostname()
		case "PATH":
			v = u.EscapedPath()
		case "QUERY":
			if withKey {
				vals, err := url.ParseQuery(u.RawQuery)
				k := key.at(i)
				if err != nil || !vals.Has(k) {
					return dst, false, nil
				}
				return append(dst, vals.Get(k)...), true, nil
			}
			if u.RawQuery == "" && !u.ForceQuery {
				return dst, false, nil
			}
			v = u.RawQuery
		case "REF":
			if u.Fragment == "" {
				return dst, false, nil
			}
			v = u.EscapedFragment()
		case "PROTOCOL":
			v = u.Scheme
		case "AUTHORITY":
			v = u.Host
			if u.User != nil {
				v = u.User.String() + "@" + v
			}
		case "FILE":
			v = u.EscapedPath()
			if u.RawQuery != "" {
				v += "?" + u.RawQuery
			}
		case "USERINFO":
			if u.User == nil {
				return dst, false, nil
			}
			v = u.User.String()
		default:
			return dst, false, nil
		}
		return append(dst, v...), true, nil
	})
}

// convertTZKernel is CONVERT_TZ(text, from, to): the 'yyyy-MM-dd HH:mm:ss' wall clock read
// in zone from, written in zone to; NULL when the text or a zone does not parse.
func convertTZKernel() kernelFn {
	zones := map[string]*time.Location{}
	zone := func(name string) *time.Location {
		if loc, ok := zones[name]; ok {
			return loc
		}
		loc, _ := planner.LoadZone(name)
		if len(zones) > 64 {
			clear(zones)
		}
		zones[name] = loc
		return loc
	}
	pattern, _ := compileDatePattern("yyyy-MM-dd HH:mm:ss")
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, from, to := strColOf(args[0]), strColOf(args[1]), strColOf(args[2])
		return strRows(c, n, args, dataLen(args[0], n), func(i int, dst []byte) ([]byte, bool, error) {
			w, ok := parseTimestampText(s.at(i))
			fz, tz := zone(from.at(i)), zone(to.at(i))
			if !ok || fz == nil || tz == nil {
				return dst, false, nil
			}
			return pattern.format(dst, toWall(tz, fromWall(fz, w))), true, nil
		})
	}
}

// similarKernel is x SIMILAR TO pattern [ESCAPE c]: the pattern translated to an anchored
// regular expression (planner.SimilarToRegex) and cached; a pattern from a column that does
// not translate fails the job, naming it.
func similarKernel() kernelFn {
	type key struct{ p, esc string }
	cache := map[key]*regexp.Regexp{}
	return func(c *ctx, n int, args []datum) (datum, error) {
		s, p := strColOf(args[0]), strColOf(args[1])
		esc := strCol{scalar: true}
		if len(args) > 2 {
			esc = strColOf(args[2])
		}
		return boolRows(c, n, args, func(i int) (bool, bool, error) {
			k := key{p.at(i), esc.at(i)}
			re, ok := cache[k]
			if !ok {
				text, err := planner.SimilarToRegex(k.p, k.esc)
				if err == nil {
					re, err = regexp.Compile(text)
				}
				if err != nil {
					return false, false, newError(ErrInvalidArgument, "SIMILAR TO pattern %s is invalid: %v", quote(k.p), err)
				}
				if len(cache) > 256 {
					clear(cache)
				}
				k.p, k.esc = strings.Clone(k.p), strings.Clone(k.esc)
				cache[k] = re
			}
			return re.MatchString(s.at(i)), true, nil
		})
	}
}

// overlayKernel is OVERLAY(s PLACING r FROM start [FOR length]): s with length characters
// (default r's length) from start replaced by r, in characters, as Flink.
func overlayKernel(c *ctx, n int, args []datum) (datum, error) {
	s, r, start := strColOf(args[0]), strColOf(args[1]), intColOf(args[2])
	var length intCol
	withLen := len(args) > 3
	if withLen {
		length = intColOf(args[3])
	}
	return strRows(c, n, args, dataLen(args[0], n)+dataLen(args[1], n), func(i int, dst []byte) ([]byte, bool, error) {
		v, repl, from := s.at(i), r.at(i), start.at(i)
		k := int64(runeCount(repl))
		if withLen {
			k = length.at(i)
		}
		head, _ := substring(v, 1, max(from-1, 0))
		tail, _ := substring(v, max(from+k, 1), 1<<31-1)
		dst = append(dst, head...)
		dst = append(dst, repl...)
		return append(dst, tail...), true, nil
	})
}
