package format

import (
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/streamsql/streamsql/planner"
)

// NullText is how FormatValue prints NULL, as Flink's changelog does.
const NullText = "null"

// FormatValue returns the text of arr[i] in the one form every text output shares
// (the changelog, CSV, the table view; JSON quotes or escapes it where needed):
//
//   - BOOLEAN: true, false
//   - INT, BIGINT: decimal digits
//   - DOUBLE: as Java's Double.toString, which Flink uses: the shortest decimal that
//     reads back as the same double, plain with at least one fraction digit when
//     1e-3 <= |x| < 1e7 (35.8, 3.0), else in scientific form (1.0E10, 1.5E-4);
//     NaN, Infinity, -Infinity
//   - DECIMAL(p, s): plain with exactly s fraction digits (12.50)
//   - STRING: as is
//   - TIMESTAMP(p): 2019-01-17 09:43:19.000, three fraction digits (the milliseconds
//     values keep); AppendTypedValue prints exactly p
//   - TIMESTAMP_LTZ(p): the same form, of the wall clock in loc (nil means UTC)
//   - DATE: 2019-01-17
//   - TIME(0): 09:43:19; TIME(p > 0): 09:43:19.123 (three fraction digits, as the
//     milliseconds it keeps); an Arrow time64 column with 6 or 9 digits
//   - INTERVAL DAY TO SECOND: +0 00:00:05.000; INTERVAL YEAR TO MONTH: +1-02
//   - BYTES: x'0aff'; ROW: (1, a); ARRAY: [1, 2]; MAP: {a=1, b=2}; NULL inside them: NULL
//   - NULL: null (NullText)
func FormatValue(arr arrow.Array, i int, loc *time.Location) string {
	if arr.IsNull(i) {
		return NullText
	}
	var buf [64]byte
	return string(AppendValue(buf[:0], arr, i, loc))
}

// AppendValue appends the text of the non-null value arr[i] to dst, in FormatValue's form.
func AppendValue(dst []byte, arr arrow.Array, i int, loc *time.Location) []byte {
	switch a := arr.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10)
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10)
	case *array.Float32:
		return appendJavaFloat(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendJavaFloat(dst, a.Value(i), 64)
	case *array.Decimal128:
		return appendDecimal(dst, a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.String:
		return append(dst, a.Value(i)...)
	case *array.LargeString:
		return append(dst, a.Value(i)...)
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		ms := toMillis(int64(a.Value(i)), t.Unit)
		if t.TimeZone == "" {
			loc = time.UTC
		}
		return appendTimestamp(dst, ms, loc, ' ', 3)
	case *array.Date32:
		return appendDate(dst, int64(a.Value(i)))
	case *array.Date64:
		return appendDate(dst, floorDiv(int64(a.Value(i)), 86400000))
	case *array.Time32:
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			return appendTimeOfDay(dst, int64(a.Value(i))*1e9, 0)
		}
		return appendTimeOfDay(dst, int64(a.Value(i))*1e6, 3)
	case *array.Time64:
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Microsecond {
			return appendTimeOfDay(dst, int64(a.Value(i))*1e3, 6)
		}
		return appendTimeOfDay(dst, int64(a.Value(i)), 9)
	case *array.Duration:
		unit := a.DataType().(*arrow.DurationType).Unit
		return appendDayTimeInterval(dst, toMillis(int64(a.Value(i)), unit))
	case *array.MonthInterval:
		return appendYearMonthInterval(dst, int64(a.Value(i)))
	}
	if out, ok := appendNested(dst, arr, i, loc); ok {
		return out
	}
	return append(dst, arr.ValueStr(i)...)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func toMillis(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return v // out of any printable range; keep it from wrapping
		}
		return v * 1000
	case arrow.Microsecond:
		return floorDiv(v, 1000)
	case arrow.Nanosecond:
		return floorDiv(v, 1000000)
	}
	return v
}

// appendJavaFloat formats f as Java's Double.toString (Float.toString for bitSize 32).
// AppendDouble appends f as Java's Double.toString writes it (35.8, 100.0, 1.0E10), the
// text of a DOUBLE everywhere in streamsql.
func AppendDouble(dst []byte, f float64) []byte { return appendJavaFloat(dst, f, 64) }

func appendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, bitSize)
		for _, c := range dst[start:] {
			if c == '.' {
				return dst
			}
		}
		return append(dst, ".0"...)
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize) // -1.2345e-05
	e := 0
	for e < len(s) && s[e] != 'e' {
		e++
	}
	mant, exp := s[:e], s[e+1:]
	dst = append(dst, mant...)
	hasDot := false
	for _, c := range mant {
		hasDot = hasDot || c == '.'
	}
	if !hasDot {
		dst = append(dst, ".0"...)
	}
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = exp[1:]
	for len(exp) > 1 && exp[0] == '0' {
		exp = exp[1:]
	}
	return append(dst, exp...)
}

// appendDecimal formats an unscaled decimal with exactly scale fraction digits.
func appendDecimal(dst []byte, n decimal128.Num, scale int32) []byte {
	if n.Sign() < 0 {
		dst = append(dst, '-')
		n = n.Negate()
	}
	var buf [48]byte
	var digits []byte
	if n.HighBits() == 0 {
		digits = strconv.AppendUint(buf[:0], n.LowBits(), 10)
	} else {
		digits = n.BigInt().Append(buf[:0], 10)
		if len(digits) > 0 && digits[0] == '-' { // only the minimum value stays negative
			digits = digits[1:]
		}
	}
	if scale <= 0 {
		dst = append(dst, digits...)
		for ; scale < 0; scale++ {
			dst = append(dst, '0')
		}
		return dst
	}
	s := int(scale)
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for k := len(digits); k < s; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}

func appendYear(dst []byte, y int) []byte {
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	switch {
	case y < 10:
		dst = append(dst, '0', '0', '0')
	case y < 100:
		dst = append(dst, '0', '0')
	case y < 1000:
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(y), 10)
}

func appendYMD(dst []byte, y, m, d int) []byte {
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

// appendDate formats days since the epoch as yyyy-MM-dd.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	return appendYMD(dst, y, m, d)
}

// AppendTypedValue appends the text of the non-null value arr[i] of SQL type t: as
// AppendValue, but a TIMESTAMP(p) or TIMESTAMP_LTZ(p) with exactly p fraction digits, as
// Flink prints it (TIMESTAMP(0): 2019-01-17 09:43:19, TIMESTAMP(6): ...19.123000).
func AppendTypedValue(dst []byte, arr arrow.Array, i int, t planner.Type, loc *time.Location) []byte {
	if d := timestampDigits(t); d >= 0 {
		if a, ok := arr.(*array.Timestamp); ok {
			tt := a.DataType().(*arrow.TimestampType)
			if tt.TimeZone == "" {
				loc = time.UTC
			}
			return appendTimestamp(dst, toMillis(int64(a.Value(i)), tt.Unit), loc, ' ', d)
		}
	}
	return AppendValue(dst, arr, i, loc)
}

// FormatTypedValue is FormatValue by AppendTypedValue.
func FormatTypedValue(arr arrow.Array, i int, t planner.Type, loc *time.Location) string {
	if arr.IsNull(i) {
		return NullText
	}
	var buf [64]byte
	return string(AppendTypedValue(buf[:0], arr, i, t, loc))
}

// timestampDigits is the fraction digits a TIMESTAMP or TIMESTAMP_LTZ of type t prints,
// -1 for other types.
func timestampDigits(t planner.Type) int {
	if t.Kind == planner.Timestamp || t.Kind == planner.TimestampLTZ {
		return planner.TimestampDigits(t)
	}
	return -1
}

// columnDigits lists timestampDigits of each column (nil when none is a timestamp).
func columnDigits(cols planner.Schema) []int {
	var d []int
	for i, c := range cols {
		if k := timestampDigits(c.Type); k >= 0 {
			if d == nil {
				d = make([]int, len(cols))
				for j := range d {
					d[j] = -1
				}
			}
			d[i] = k
		}
	}
	return d
}

// digitsAt is digits[c], or 3 (the milliseconds values keep) when digits does not say.
func digitsAt(digits []int, c int) int {
	if c >= 0 && c < len(digits) && digits[c] >= 0 {
		return digits[c]
	}
	return 3
}

// appendTimestamp formats epoch milliseconds as the wall clock in loc:
// yyyy-MM-dd HH:mm:ss with digits fraction digits (zeros past the third), with sep
// between date and time.
func appendTimestamp(dst []byte, ms int64, loc *time.Location, sep byte, digits int) []byte {
	var y, mo, d, h, mi, s, frac int
	if loc == nil || loc == time.UTC {
		days := floorDiv(ms, 86400000)
		rem := int(ms - days*86400000)
		y, mo, d = civilFromDays(days)
		h, mi, s, frac = rem/3600000, rem/60000%60, rem/1000%60, rem%1000
	} else {
		t := time.UnixMilli(ms).In(loc)
		var month time.Month
		y, month, d = t.Date()
		mo = int(month)
		h, mi, s = t.Clock()
		frac = t.Nanosecond() / 1000000
	}
	dst = appendYMD(dst, y, mo, d)
	dst = append(dst, sep)
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, mi)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if digits <= 0 {
		return dst
	}
	ms3 := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	dst = append(dst, '.')
	dst = append(dst, ms3[:min(digits, 3)]...)
	for k := 3; k < digits; k++ {
		dst = append(dst, '0')
	}
	return dst
}

// appendTimeOfDay formats nanoseconds of the day as HH:mm:ss with digits fraction digits.
func appendTimeOfDay(dst []byte, ns int64, digits int) []byte {
	ns = ((ns % 86400e9) + 86400e9) % 86400e9
	sec := ns / 1e9
	dst = append2(dst, int(sec/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(sec/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(sec%60))
	if digits > 0 {
		var frac [9]byte
		f := ns % 1e9
		for k := 8; k >= 0; k-- {
			frac[k] = byte('0' + f%10)
			f /= 10
		}
		dst = append(dst, '.')
		dst = append(dst, frac[:digits]...)
	}
	return dst
}

// appendDayTimeInterval formats milliseconds as Flink prints INTERVAL DAY TO SECOND:
// +d HH:mm:ss.SSS.
func appendDayTimeInterval(dst []byte, ms int64) []byte {
	u := uint64(ms)
	if ms < 0 {
		dst = append(dst, '-')
		u = uint64(-(ms + 1)) + 1
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendUint(dst, u/86400000, 10)
	rem := int(u % 86400000)
	dst = append(dst, ' ')
	dst = append2(dst, rem/3600000)
	dst = append(dst, ':')
	dst = append2(dst, rem/60000%60)
	dst = append(dst, ':')
	dst = append2(dst, rem/1000%60)
	f := rem % 1000
	return append(dst, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// appendYearMonthInterval formats months as Flink prints INTERVAL YEAR TO MONTH: +y-MM.
func appendYearMonthInterval(dst []byte, months int64) []byte {
	if months < 0 {
		dst = append(dst, '-')
		months = -months
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, months/12, 10)
	dst = append(dst, '-')
	return append2(dst, int(months%12))
}
