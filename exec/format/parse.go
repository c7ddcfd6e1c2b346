package format

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/planner"
)

// This file parses SQL values from byte slices without allocating. Each parser returns
// a reason: "" on success, otherwise a short phrase that ends up in a ParseError.

const (
	reasonSyntax   = "syntax"
	reasonRange    = "out of range"
	reasonOverflow = "precision overflow"
)

// unsafeString views b as a string without copying; the string must not outlive b's
// contents and must not be retained.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimSpace trims ASCII white space, as Flink trims numbers and dates before parsing.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseInt parses a decimal integer with an optional sign that fits in [min, max].
func parseInt(b []byte, min, max int64) (int64, string) {
	if len(b) == 0 {
		return 0, reasonSyntax
	}
	neg := false
	switch b[0] {
	case '-':
		neg = true
		b = b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, reasonSyntax
	}
	if len(b) <= 18 {
		// No overflow possible: check the range once at the end.
		var n int64
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, reasonSyntax
			}
			n = n*10 + int64(d)
		}
		if neg {
			n = -n
		}
		if n < min || n > max {
			return 0, reasonRange
		}
		return n, ""
	}
	limit := uint64(max)
	if neg {
		limit = uint64(-(min + 1)) + 1
	}
	var n uint64
	overflow := false
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, reasonSyntax
		}
		if n > (limit-uint64(d))/10 {
			overflow = true // keep scanning: a later non-digit makes it a syntax error
			continue
		}
		n = n*10 + uint64(d)
	}
	if overflow {
		return 0, reasonRange
	}
	if neg {
		return -int64(n-1) - 1, ""
	}
	return int64(n), ""
}

var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a DOUBLE. Plain decimals with at most 15 significant digits take an
// exact fast path (an integer mantissa and one division by an exact power of ten round
// correctly); everything else goes to strconv.ParseFloat on a string view of b.
func parseFloat(b []byte) (float64, string) {
	if f, ok := parseFloatFast(b); ok {
		return f, ""
	}
	if !floatSyntax(b) {
		return 0, reasonSyntax // Go's own forms (1_000.5, 0x1p3, Inf) are no DOUBLE text
	}
	f, err := strconv.ParseFloat(unsafeString(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, reasonRange
		}
		return 0, reasonSyntax
	}
	return f, ""
}

// floatSyntax accepts the decimal forms of Java's Double.parseDouble, which Flink's
// formats use: [+-](digits[.digits] | .digits)[(e|E)[+-]digits], NaN and Infinity.
func floatSyntax(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	if rest := string(b[i:]); rest == "Infinity" || rest == "NaN" {
		return true
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i]-'0' <= 9 {
			i++
			n++
		}
		return n
	}
	n := digits()
	if i < len(b) && b[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

func parseFloatFast(b []byte) (float64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	var mant uint64
	nd, sig, frac := 0, 0, 0
	dot := false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c-'0' <= 9:
			nd++
			if mant != 0 || c != '0' {
				sig++
				if sig > 15 {
					return 0, false
				}
			}
			mant = mant*10 + uint64(c-'0')
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if nd == 0 || frac >= len(float64pow10) {
		return 0, false
	}
	f := float64(mant) / float64pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// parseBool accepts true and false in any case.
func parseBool(b []byte) (bool, string) {
	switch len(b) {
	case 4:
		if b[0]|0x20 == 't' && b[1]|0x20 == 'r' && b[2]|0x20 == 'u' && b[3]|0x20 == 'e' {
			return true, ""
		}
	case 5:
		if b[0]|0x20 == 'f' && b[1]|0x20 == 'a' && b[2]|0x20 == 'l' && b[3]|0x20 == 's' && b[4]|0x20 == 'e' {
			return false, ""
		}
	}
	return false, reasonSyntax
}

// decimalPow10 holds 10^0 .. 10^38.
var decimalPow10 = func() (t [39]decimal128.Num) {
	p := decimal128.FromU64(1)
	ten := decimal128.FromU64(10)
	for i := range t {
		t[i] = p
		p = p.Mul(ten)
	}
	return t
}()

// parseDecimal parses a decimal number ([+-]digits[.digits][e[+-]digits]) into the
// unscaled value of DECIMAL(prec, scale), rounding half up as Flink does when the text
// has more fraction digits than the scale. A value needing more than prec digits is a
// precision overflow.
func parseDecimal(b []byte, prec, scale int) (decimal128.Num, string) {
	var zero decimal128.Num
	if prec < 1 || prec > 38 || scale < 0 || scale > prec {
		return zero, reasonOverflow
	}
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i++
	}
	intStart := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(b) && b[i] == '.' {
		i++
		fracStart = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		fracEnd = i
	}
	nInt, nFrac := intEnd-intStart, fracEnd-fracStart
	if nInt+nFrac == 0 {
		return zero, reasonSyntax
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			eneg = b[i] == '-'
			i++
		}
		if i == len(b) {
			return zero, reasonSyntax
		}
		for ; i < len(b); i++ {
			c := b[i] - '0'
			if c > 9 {
				return zero, reasonSyntax
			}
			if exp < 100000 {
				exp = exp*10 + int(c)
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(b) {
		return zero, reasonSyntax
	}
	// The digits D (integer then fraction part) times 10^k is the unscaled value.
	k := exp - nFrac + scale
	total := nInt + nFrac
	keep := total + k // digits of D that stay; the rest are rounded away
	if keep > total {
		keep = total
	}
	digit := func(j int) byte {
		if j < nInt {
			return b[intStart+j]
		}
		return b[fracStart+j-nInt]
	}
	var n decimal128.Num
	sig := 0
	ten := decimalPow10[1]
	for j := 0; j < keep; j++ {
		d := digit(j) - '0'
		if sig == 0 && d == 0 {
			continue
		}
		sig++
		if sig > prec {
			return zero, reasonOverflow
		}
		n = n.Mul(ten).Add(decimal128.FromU64(uint64(d)))
	}
	if keep >= 0 && keep < total && digit(keep) >= '5' {
		n = n.Add(decimalPow10[0])
	}
	if k > 0 && sig > 0 {
		if sig+k > prec {
			return zero, reasonOverflow
		}
		n = n.Mul(decimalPow10[k])
	}
	if !n.Less(decimalPow10[prec]) {
		return zero, reasonOverflow
	}
	if neg {
		n = n.Negate()
	}
	return n, ""
}

// Millisecond bounds of the timestamps this package reads and prints: years 0000 to 9999.
const (
	minMillis = -62167219200000 // 0000-01-01 00:00:00.000
	maxMillis = 253402300799999 // 9999-12-31 23:59:59.999
)

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian date
// (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		yy++
	}
	return int(yy), m, d
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func digits2(b []byte, i int) (int, bool) {
	c0, c1 := b[i]-'0', b[i+1]-'0'
	if c0 > 9 || c1 > 9 {
		return 0, false
	}
	return int(c0)*10 + int(c1), true
}

// parseDateParts reads yyyy-MM-dd at the start of b.
func parseDateParts(b []byte) (y, m, d int, ok bool) {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		return 0, 0, 0, false
	}
	y1, ok1 := digits2(b, 0)
	y2, ok2 := digits2(b, 2)
	m, ok3 := digits2(b, 5)
	d, ok4 := digits2(b, 8)
	if !(ok1 && ok2 && ok3 && ok4) || m < 1 || m > 12 || d < 1 || d > daysIn(y1*100+y2, m) {
		return 0, 0, 0, false
	}
	return y1*100 + y2, m, d, true
}

// parseDate parses yyyy-MM-dd into days since the epoch.
func parseDate(b []byte) (int32, string) {
	if len(b) != 10 {
		return 0, reasonSyntax
	}
	y, m, d, ok := parseDateParts(b)
	if !ok {
		return 0, reasonSyntax
	}
	return int32(daysFromCivil(y, m, d)), ""
}

// isEpochNumber reports whether b is an optionally negative run of digits.
func isEpochNumber(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c-'0' > 9 {
			return false
		}
	}
	return true
}

// parseTimestamp parses `yyyy-MM-dd[ T]HH:mm[:ss[.S{1,9}]]` into epoch milliseconds
// (fractions below a millisecond are truncated), or a number of epoch milliseconds. A
// TIMESTAMP's wall clock is read as UTC; a TIMESTAMP_LTZ's (ltz) in loc, or in UTC when
// the text ends with Z.
func parseTimestamp(b []byte, ltz bool, loc *time.Location) (int64, string) {
	return parseTimestampCached(b, ltz, loc, nil)
}

// minuteCache holds the last minute a column's timestamps were in, "yyyy-mm-dd hh:mm",
// and its epoch milliseconds in UTC: the timestamps of a stream mostly share it.
type minuteCache struct {
	key [16]byte
	ms  int64
	ok  bool
}

// parseTimestampCached is parseTimestamp reading a UTC timestamp's minute from mc when
// it is the last one's (mc may be nil).
func parseTimestampCached(b []byte, ltz bool, loc *time.Location, mc *minuteCache) (int64, string) {
	if (len(b) < 5 || b[4] != '-') && isEpochNumber(b) {
		ms, r := parseInt(b, minMillis, maxMillis)
		return ms, r
	}
	fixedUTC := !ltz || loc == nil || loc == time.UTC
	var y, mo, d, h, mi int
	var minute int64
	if mc != nil && fixedUTC && mc.ok && len(b) >= 16 && string(b[:16]) == string(mc.key[:]) {
		minute = mc.ms
	} else {
		var ok bool
		y, mo, d, ok = parseDateParts(b)
		if !ok || len(b) < 16 || (b[10] != ' ' && b[10] != 'T') || b[13] != ':' {
			return 0, reasonSyntax
		}
		var ok1, ok2 bool
		h, ok1 = digits2(b, 11)
		mi, ok2 = digits2(b, 14)
		if !ok1 || !ok2 || h > 23 || mi > 59 {
			return 0, reasonSyntax
		}
		minute = daysFromCivil(y, mo, d)*86400000 + int64(h)*3600000 + int64(mi)*60000
		if mc != nil && fixedUTC {
			copy(mc.key[:], b[:16])
			mc.ms, mc.ok = minute, true
		}
	}
	i := 16
	sec, ms := 0, 0
	if i < len(b) && b[i] == ':' {
		if i+3 > len(b) {
			return 0, reasonSyntax
		}
		s, ok := digits2(b, i+1)
		if !ok || s > 59 {
			return 0, reasonSyntax
		}
		sec = s
		i += 3
		if i < len(b) && b[i] == '.' {
			i++
			n := 0
			for i < len(b) && b[i]-'0' <= 9 {
				if n < 3 {
					ms = ms*10 + int(b[i]-'0')
				}
				n++
				i++
			}
			if n == 0 || n > 9 {
				return 0, reasonSyntax
			}
			for ; n < 3; n++ {
				ms *= 10
			}
		}
	}
	utc := !ltz || loc == nil || loc == time.UTC
	if ltz && i == len(b)-1 && b[i] == 'Z' {
		utc = true
		i++
	}
	if i != len(b) {
		return 0, reasonSyntax
	}
	if utc {
		return minute + int64(sec)*1000 + int64(ms), ""
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ms*1000000, loc).UnixMilli()
	if t < minMillis || t > maxMillis {
		return 0, reasonRange
	}
	return t, ""
}

// appendValidUTF8 appends src to dst with each invalid UTF-8 sequence replaced by
// U+FFFD, as a Java reader decoding UTF-8 does.
func appendValidUTF8(dst, src []byte) []byte {
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, src[:size]...)
		}
		src = src[size:]
	}
	return dst
}

// ParseDecimal parses text as a DECIMAL(prec, scale) value the way the formats read
// one: plain or with an exponent, rounded half up to scale; too many digits for prec
// is an error.
func ParseDecimal(text string, prec, scale int) (decimal128.Num, error) {
	n, r := parseDecimal([]byte(text), prec, scale)
	if r != "" {
		msg := "cannot parse " + strconv.Quote(text) + " as DECIMAL(" + strconv.Itoa(prec) + ", " + strconv.Itoa(scale) + ")"
		if r != reasonSyntax {
			msg += " (" + r + ")"
		}
		return n, errors.New(msg)
	}
	return n, nil
}

// parseTime parses HH:mm[:ss[.fraction]] into a TIME(prec) value: seconds of the day for
// TIME(0), milliseconds otherwise, truncated to the fraction digits the type keeps.
func parseTime(b []byte, prec int) (int64, string) {
	ms, _, ok := planner.ParseTimeOfDay(unsafeString(b))
	if !ok {
		return 0, reasonSyntax
	}
	t := planner.TimeType(prec)
	keep := int64(1)
	for k := planner.TimeDigits(t); k < 3; k++ {
		keep *= 10
	}
	return (ms - ms%keep) / planner.TimeUnitMillis(t), ""
}
