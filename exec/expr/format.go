package expr

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/streamsql/streamsql/exec/format"
)

// Text forms of values, as CAST prints and parses them (Flink's formats).

// appendDouble formats f as Java's Double.toString, as every DOUBLE prints.
func appendDouble(dst []byte, f float64) []byte { return format.AppendDouble(dst, f) }

// appendDayTime formats milliseconds as Flink prints INTERVAL DAY TO SECOND: +d hh:mm:ss.SSS.
func appendDayTime(dst []byte, ms int64) []byte {
	if ms < 0 {
		dst = append(dst, '-')
		ms = -ms
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, ms/msPerDay, 10)
	dst = append(dst, ' ')
	dst = pad(dst, ms/3600000%24, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/60000%60, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/1000%60, 2)
	dst = append(dst, '.')
	return pad(dst, ms%1000, 3)
}

// appendYearMonth formats months as Flink prints INTERVAL YEAR TO MONTH: +y-mm.
func appendYearMonth(dst []byte, m int64) []byte {
	if m < 0 {
		dst = append(dst, '-')
		m = -m
	} else {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, m/12, 10)
	dst = append(dst, '-')
	return pad(dst, m%12, 2)
}

// parseBool accepts Flink's spellings, case-insensitive: t true y yes 1, f false n no 0.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(trimSpaceASCII(s)) {
	case "t", "true", "y", "yes", "1":
		return true, true
	case "f", "false", "n", "no", "0":
		return false, true
	}
	return false, false
}

// parseInt parses an integer as Flink does: surrounding whitespace, an optional sign,
// digits, and an optional fraction that is checked and dropped.
func parseInt(s string) (int64, bool) {
	if len(s) > 0 && (s[0] <= ' ' || s[len(s)-1] <= ' ') {
		s = trimSpaceASCII(s)
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if v, ok := parseDigits(s); ok {
		if neg {
			v = -v
		}
		return v, true
	}
	if k := strings.IndexByte(s, '.'); k >= 0 {
		for i := k + 1; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
		s = s[:k]
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 || v > (1<<63)/10 {
			return 0, false
		}
		if v = v*10 + uint64(d); v > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseDigits parses 1 to 18 decimal digits, whole groups of eight at a time; ok is false
// for anything else.
func parseDigits(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v uint64
	head := len(s) % 8
	for i := 0; i < head; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	for s = s[head:]; len(s) >= 8; s = s[8:] {
		d, ok := eightDigits(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s), 8)))
		if !ok {
			return 0, false
		}
		v = v*1e8 + d
	}
	return int64(v), true
}

// eightDigits converts eight ASCII digits (the first in the lowest byte) to their value.
func eightDigits(w uint64) (uint64, bool) {
	const zeros = 0x3030303030303030
	if w&0xf0f0f0f0f0f0f0f0 != zeros || (w+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 != zeros {
		return 0, false
	}
	w -= zeros
	w = w*10 + w>>8
	w = ((w&0x000000ff000000ff)*(100+1000000<<32) + (w>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
	return w, true
}

func pad(dst []byte, v int64, width int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for k := len(s); k < width; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendDate appends days as yyyy-MM-dd.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civil(days)
	dst = pad(dst, int64(y), 4)
	dst = append(dst, '-')
	dst = pad(dst, int64(m), 2)
	dst = append(dst, '-')
	return pad(dst, int64(d), 2)
}

// appendTime appends milliseconds of the day as HH:mm:ss with digits fraction digits.
func appendTime(dst []byte, ms int64, digits int) []byte {
	dst = pad(dst, ms/3600000, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/60000%60, 2)
	dst = append(dst, ':')
	dst = pad(dst, ms/1000%60, 2)
	if digits > 0 {
		dst = append(dst, '.')
		frac := pad(make([]byte, 0, 3), ms%1000, 3)
		dst = append(dst, frac[:digits]...)
	}
	return dst
}

// appendTimestamp appends a wall clock as yyyy-MM-dd HH:mm:ss with prec fraction digits.
func appendTimestamp(dst []byte, ms int64, prec int) []byte {
	days := floorDiv(ms, msPerDay)
	tod := ms - days*msPerDay
	dst = appendDate(dst, days)
	dst = append(dst, ' ')
	dst = pad(dst, tod/3600000, 2)
	dst = append(dst, ':')
	dst = pad(dst, tod/60000%60, 2)
	dst = append(dst, ':')
	dst = pad(dst, tod/1000%60, 2)
	if prec > 0 {
		dst = append(dst, '.')
		frac := pad(make([]byte, 0, 9), tod%1000, 3)
		for k := 0; k < prec; k++ {
			if k < 3 {
				dst = append(dst, frac[k])
			} else {
				dst = append(dst, '0')
			}
		}
	}
	return dst
}

// parseTimestampText parses yyyy-M-d[( |T)H:m[:s[.fraction]]] into a wall clock, as Flink's
// default timestamp format (surrounding whitespace allowed).
func parseTimestampText(s string) (int64, bool) {
	s = trimSpaceASCII(s)
	p := textParser{s: s}
	days, ok := p.date()
	if !ok {
		return 0, false
	}
	if p.done() {
		return days * msPerDay, true
	}
	if c := p.s[p.i]; c != ' ' && c != 'T' {
		return 0, false
	}
	p.i++
	h, ok1 := p.num(1, 2)
	ok2 := p.lit(':')
	mi, ok3 := p.num(1, 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 {
		return 0, false
	}
	var sec, ms int64
	if p.lit(':') {
		var ok bool
		if sec, ok = p.num(1, 2); !ok || sec > 59 {
			return 0, false
		}
		if p.lit('.') {
			start := p.i
			f, ok := p.num(1, 9)
			if !ok {
				return 0, false
			}
			for k := p.i - start; k < 3; k++ {
				f *= 10
			}
			for k := p.i - start; k > 3; k-- {
				f /= 10
			}
			ms = f
		}
	}
	if !p.done() {
		return 0, false
	}
	return days*msPerDay + h*3600000 + mi*60000 + sec*1000 + ms, true
}

// parseDateText parses yyyy-M-d (anything after a space or 'T' is ignored, as Flink).
func parseDateText(s string) (int64, bool) {
	s = trimSpaceASCII(s)
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == 'T' {
			s = s[:i]
			break
		}
	}
	p := textParser{s: s}
	days, ok := p.date()
	return days, ok && p.done()
}

type textParser struct {
	s string
	i int
}

func (p *textParser) done() bool { return p.i == len(p.s) }

func (p *textParser) lit(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// num reads minDigits to maxDigits decimal digits.
func (p *textParser) num(minDigits, maxDigits int) (int64, bool) {
	var v int64
	k := 0
	for p.i < len(p.s) && k < maxDigits && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		v = v*10 + int64(p.s[p.i]-'0')
		p.i++
		k++
	}
	return v, k >= minDigits
}

func (p *textParser) date() (int64, bool) {
	neg := p.lit('-')
	y, ok1 := p.num(1, 9)
	ok2 := p.lit('-')
	m, ok3 := p.num(1, 2)
	ok4 := p.lit('-')
	d, ok5 := p.num(1, 2)
	if neg {
		y = -y
	}
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || m < 1 || m > 12 || d < 1 || d > int64(daysInMonth(int(y), int(m))) {
		return 0, false
	}
	return daysFromCivil(int(y), int(m), int(d)), true
}
