package expr

import (
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
