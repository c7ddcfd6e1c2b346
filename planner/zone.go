package planner

import (
	"strconv"
	"strings"
	"time"
)

// javaShortZones are the three-letter zone ids Java's TimeZone accepts (ZoneId.SHORT_IDS),
// which Flink's CONVERT_TZ takes; Go knows only region names and offsets.
var javaShortZones = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
	"CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
	"EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
	"IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico",
	"PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal", "VST": "Asia/Ho_Chi_Minh",
	"EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

// LoadZone resolves a time zone as Java names it: a region (Europe/Berlin), UTC or GMT, an
// offset (GMT+08:00, UTC-5, +05:30), or one of Java's three-letter ids (PST).
func LoadZone(name string) (*time.Location, error) {
	if alias, ok := javaShortZones[name]; ok {
		name = alias
	}
	rest := name
	for _, p := range []string{"GMT", "UTC", "UT"} {
		if strings.HasPrefix(rest, p) && len(rest) > len(p) && (rest[len(p)] == '+' || rest[len(p)] == '-') {
			rest = rest[len(p):]
			break
		}
	}
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		h, m, _ := strings.Cut(rest[1:], ":")
		if m == "" && len(h) == 4 {
			h, m = h[:2], h[2:]
		}
		hh, err1 := strconv.Atoi(h)
		mm := 0
		var err2 error
		if m != "" {
			mm, err2 = strconv.Atoi(m)
		}
		if err1 != nil || err2 != nil || hh > 18 || mm > 59 {
			return nil, &Error{Msg: "unknown time zone '" + name + "'"}
		}
		off := hh*3600 + mm*60
		if rest[0] == '-' {
			off = -off
		}
		return time.FixedZone(name, off), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, &Error{Msg: "unknown time zone '" + name + "'"}
	}
	return loc, nil
}
