package expr

import (
	"strings"
)

// Date-time patterns in Java's letters, as DATE_FORMAT and TO_TIMESTAMP take them:
// y year, M month (MMM Jan, MMMM January), d day, H hour 0-23, h hour 1-12, a AM/PM,
// m minute, s second, S fraction of second, D day of year, E day name (parse: skipped),
// '...' quoted text ('' a quote); other non-letters are literal.

type dateTok struct {
	letter byte // 0 for literal text
	width  int
	lit    string
}

type datePattern []dateTok

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}
var dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

func compileDatePattern(p string) (datePattern, error) {
	var toks datePattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, dateTok{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			for ; j < len(p); j++ {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j++
						continue
					}
					break
				}
				lit.WriteByte(p[j])
			}
			if j >= len(p) {
				return nil, newError(ErrInvalidArgument, "unterminated quote in date pattern '%s'", p)
			}
			i = j + 1
		case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
			if !strings.ContainsRune("yMdHhmsSaDE", rune(c)) {
				return nil, newError(ErrInvalidArgument, "unsupported letter '%c' in date pattern '%s'", c, p)
			}
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			flush()
			toks = append(toks, dateTok{letter: c, width: j - i})
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return toks, nil
}

// format appends a wall clock (ms, read as UTC) formatted by the pattern.
func (dp datePattern) format(dst []byte, ms int64) []byte {
	days := floorDiv(ms, msPerDay)
	tod := ms - days*msPerDay
	y, m, d := civil(days)
	for _, t := range dp {
		w := t.width
		switch t.letter {
		case 0:
			dst = append(dst, t.lit...)
		case 'y':
			if w == 2 {
				dst = pad(dst, floorMod(int64(y), 100), 2)
			} else {
				dst = pad(dst, int64(y), w)
			}
		case 'M':
			switch {
			case w >= 4:
				dst = append(dst, monthNames[m-1]...)
			case w == 3:
				dst = append(dst, monthNames[m-1][:3]...)
			default:
				dst = pad(dst, int64(m), w)
			}
		case 'd':
			dst = pad(dst, int64(d), w)
		case 'H':
			dst = pad(dst, tod/3600000, w)
		case 'h':
			h := tod / 3600000 % 12
			if h == 0 {
				h = 12
			}
			dst = pad(dst, h, w)
		case 'a':
			if tod < 12*3600000 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'm':
			dst = pad(dst, tod/60000%60, w)
		case 's':
			dst = pad(dst, tod/1000%60, w)
		case 'S':
			frac := pad(make([]byte, 0, 3), tod%1000, 3)
			for k := 0; k < w; k++ {
				if k < 3 {
					dst = append(dst, frac[k])
				} else {
					dst = append(dst, '0')
				}
			}
		case 'D':
			dst = pad(dst, days-daysFromCivil(y, 1, 1)+1, w)
		case 'E':
			name := dayNames[floorMod(days+4, 7)]
			if w <= 3 {
				name = name[:3]
			}
			dst = append(dst, name...)
		}
	}
	return dst
}

// parse reads text formatted by the pattern into a wall clock; fields it lacks default to
// 1970-01-01 00:00:00.000. A numeric field directly followed by another takes exactly its
// width in digits, else one or more.
func (dp datePattern) parse(s string) (int64, bool) {
	p := textParser{s: s}
	y, mo, d := int64(1970), int64(1), int64(1)
	var h, mi, sec, ms, doy int64
	pm, h12 := -1, false
	for k, t := range dp {
		if t.letter == 0 {
			if !strings.HasPrefix(p.s[p.i:], t.lit) {
				return 0, false
			}
			p.i += len(t.lit)
			continue
		}
		fixedWidth := k+1 < len(dp) && dp[k+1].letter != 0 && dp[k+1].letter != 'a' && dp[k+1].letter != 'E' &&
			!(dp[k+1].letter == 'M' && dp[k+1].width >= 3)
		minD, maxD := 1, max(t.width, 2)
		if fixedWidth {
			minD, maxD = t.width, t.width
		}
		var v int64
		ok := true
		switch t.letter {
		case 'a':
			switch {
			case hasPrefixFold(p.s[p.i:], "AM"):
				pm = 0
			case hasPrefixFold(p.s[p.i:], "PM"):
				pm = 1
			default:
				return 0, false
			}
			p.i += 2
			continue
		case 'E':
			for p.i < len(p.s) && isLetter(p.s[p.i]) {
				p.i++
			}
			continue
		case 'M':
			if t.width >= 3 {
				found := false
				for i, name := range monthNames {
					if hasPrefixFold(p.s[p.i:], name) {
						mo, p.i, found = int64(i+1), p.i+len(name), true
						break
					} else if hasPrefixFold(p.s[p.i:], name[:3]) {
						mo, p.i, found = int64(i+1), p.i+3, true
						break
					}
				}
				if !found {
					return 0, false
				}
				continue
			}
		case 'y', 'S':
			if !fixedWidth {
				maxD = 9
			}
		case 'D':
			if !fixedWidth {
				maxD = 3
			}
		}
		start := p.i
		if v, ok = p.num(minD, maxD); !ok {
			return 0, false
		}
		switch t.letter {
		case 'y':
			if t.width == 2 && p.i-start == 2 {
				v += 2000
			}
			y = v
		case 'M':
			mo = v
		case 'd':
			d = v
		case 'H':
			h = v
		case 'h':
			h, h12 = v, true
		case 'm':
			mi = v
		case 's':
			sec = v
		case 'S':
			for n := p.i - start; n < 3; n++ {
				v *= 10
			}
			for n := p.i - start; n > 3; n-- {
				v /= 10
			}
			ms = v
		case 'D':
			doy = v
		}
	}
	if !p.done() {
		return 0, false
	}
	if h12 {
		if h < 1 || h > 12 {
			return 0, false
		}
		h %= 12
	}
	if pm == 1 {
		h += 12
	}
	if mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	var days int64
	if doy > 0 {
		if doy > 365+int64(b2i(isLeap(int(y)))) {
			return 0, false
		}
		days = daysFromCivil(int(y), 1, 1) + doy - 1
	} else {
		if d > int64(daysInMonth(int(y), int(mo))) {
			return 0, false
		}
		days = daysFromCivil(int(y), int(mo), int(d))
	}
	return days*msPerDay + h*3600000 + mi*60000 + sec*1000 + ms, true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
