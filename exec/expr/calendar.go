package expr

import (
	"strconv"
	"time"
)

// Calendar arithmetic on epoch milliseconds and days, proleptic Gregorian, with no time
// zone (a TIMESTAMP is its wall clock read as UTC).

const msPerDay = 86400000

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// civil converts days since 1970-01-01 to year, month (1-12), day (1-31).
func civil(days int64) (y, m, d int) {
	z := days + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	dd := doy - (153*mp+2)/5 + 1
	mm := mp + 3
	if mm > 12 {
		mm -= 12
	}
	if mm <= 2 {
		yy++
	}
	return int(yy), int(mm), int(dd)
}

// daysFromCivil converts a date to days since 1970-01-01.
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	mp := int64(m + 9)
	if m > 2 {
		mp = int64(m - 3)
	}
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// addMonths adds calendar months to a wall-clock time, clamping the day to the month's
// last (Jan 31 + 1 month = Feb 28 or 29).
func addMonths(ms, months int64) int64 {
	days := floorDiv(ms, msPerDay)
	tod := ms - days*msPerDay
	y, m, d := civil(days)
	total := int64(y)*12 + int64(m-1) + months
	ny := floorDiv(total, 12)
	nm := int(total-ny*12) + 1
	nd := min(d, daysInMonth(int(ny), nm))
	return daysFromCivil(int(ny), nm, nd)*msPerDay + tod
}

// toWall converts an instant to its wall clock in loc, read as UTC.
func toWall(loc *time.Location, ms int64) int64 {
	if loc == time.UTC {
		return ms
	}
	_, off := time.UnixMilli(ms).In(loc).Zone()
	return ms + int64(off)*1000
}

// fromWall converts a wall clock in loc (read as UTC) to the instant. In a gap or overlap
// of a daylight-saving change Go's time.Date picks the offset.
func fromWall(loc *time.Location, wall int64) int64 {
	if loc == time.UTC {
		return wall
	}
	days := floorDiv(wall, msPerDay)
	tod := wall - days*msPerDay
	y, m, d := civil(days)
	t := time.Date(y, time.Month(m), d, int(tod/3600000), int(tod/60000%60), int(tod/1000%60), int(tod%1000)*1e6, loc)
	return t.UnixMilli()
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
