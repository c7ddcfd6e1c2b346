package format

import (
	"bytes"
	"math"
	"strconv"
	"testing"
	"time"
)

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   int64
		reason string
	}{
		{"0", 0, ""}, {"42", 42, ""}, {"-42", -42, ""}, {"+7", 7, ""},
		{"2147483647", 2147483647, ""}, {"-2147483648", -2147483648, ""},
		{"2147483648", 0, reasonRange}, {"-2147483649", 0, reasonRange},
		{"", 0, reasonSyntax}, {"-", 0, reasonSyntax}, {"1a", 0, reasonSyntax},
		{"99999999999999999999x", 0, reasonSyntax}, {"1.0", 0, reasonSyntax},
	} {
		got, r := parseInt([]byte(tc.in), math.MinInt32, math.MaxInt32)
		if got != tc.want || r != tc.reason {
			t.Errorf("parseInt(%q) = %d, %q; want %d, %q", tc.in, got, r, tc.want, tc.reason)
		}
	}
	for _, s := range []string{"9223372036854775807", "-9223372036854775808"} {
		got, r := parseInt([]byte(s), math.MinInt64, math.MaxInt64)
		if r != "" || strconv.FormatInt(got, 10) != s {
			t.Errorf("parseInt(%q) = %d, %q", s, got, r)
		}
	}
	for _, s := range []string{"9223372036854775808", "-9223372036854775809", "18446744073709551616"} {
		if _, r := parseInt([]byte(s), math.MinInt64, math.MaxInt64); r != reasonRange {
			t.Errorf("parseInt(%q): reason %q, want out of range", s, r)
		}
	}
}

func TestParseFloatMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "-0", "35.8", "0.1", "1.", ".5", "-.5", "123456789012345",
		"1234567890123456", "0.000000000000000000001", "0.0000000000000000000000001", "3.14159",
		"1e10", "1.5E-4", "NaN", "Infinity", "-Infinity", "9007199254740993", "0.30000000000000004",
		"+12.25", "100000000000000000000000"} {
		want, err := strconv.ParseFloat(s, 64)
		got, r := parseFloat([]byte(s))
		if err != nil {
			t.Fatalf("bad case %q", s)
		}
		if r != "" || (got != want && !(math.IsNaN(got) && math.IsNaN(want))) || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("parseFloat(%q) = %v, %q; want %v", s, got, r, want)
		}
	}
	// Go's own syntax is not Java's, whose Double.parseDouble Flink's formats use.
	for _, s := range []string{"", "-", ".", "1..2", "abc", "1e", "--1", "1_0.5", "0x1p3", "inf", "-Inf", "nan", "1e1_0", "0b101"} {
		if _, r := parseFloat([]byte(s)); r == "" {
			t.Errorf("parseFloat(%q) succeeded", s)
		}
	}
	if _, r := parseFloat([]byte("1e999")); r != reasonRange {
		t.Errorf("parseFloat(1e999): %q", r)
	}
}

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in          string
		prec, scale int
		want        string // formatted, or the reason
	}{
		{"12.5", 10, 2, "12.50"},
		{"-12.345", 10, 2, "-12.35"}, // half up, away from zero
		{"12.344", 10, 2, "12.34"},
		{"0.005", 5, 2, "0.01"},
		{"0", 5, 2, "0.00"},
		{".5", 5, 0, "1"},
		{"1e3", 6, 2, "1000.00"},
		{"1.5E-1", 6, 2, "0.15"},
		{"1e-10", 6, 2, "0.00"},
		{"99999999.99", 10, 2, "99999999.99"},
		{"99999999.995", 10, 2, reasonOverflow}, // rounds to 10^8
		{"123456789", 10, 2, reasonOverflow},
		{"00000000000000000000000000000000000000000001", 5, 0, "1"},
		{"12345678901234567890123456789012345678", 38, 0, "12345678901234567890123456789012345678"},
		{"-1234567890123456789012345678901234567.8", 38, 1, "-1234567890123456789012345678901234567.8"},
		{"1e40", 38, 0, reasonOverflow},
		{"1e-99999999", 38, 0, "0"},
		{"abc", 5, 2, reasonSyntax},
		{"1.2.3", 5, 2, reasonSyntax},
		{"", 5, 2, reasonSyntax},
		{"-", 5, 2, reasonSyntax},
		{"1e", 5, 2, reasonSyntax},
		{"Infinity", 5, 2, reasonSyntax},
	} {
		n, r := parseDecimal([]byte(tc.in), tc.prec, tc.scale)
		got := r
		if r == "" {
			got = string(appendDecimal(nil, n, int32(tc.scale)))
		}
		if got != tc.want {
			t.Errorf("parseDecimal(%q, %d, %d) = %s; want %s", tc.in, tc.prec, tc.scale, got, tc.want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	ms := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMilli()
	}
	for _, tc := range []struct {
		in   string
		ltz  bool
		loc  *time.Location
		want int64
		ok   bool
	}{
		{"2019-01-17 09:43:19", false, nil, ms("2019-01-17 09:43:19.000"), true},
		{"2019-01-17T09:43:19.5", false, nil, ms("2019-01-17 09:43:19.500"), true},
		{"2019-01-17 09:43:19.123456789", false, nil, ms("2019-01-17 09:43:19.123"), true},
		{"2019-01-17 09:43", false, nil, ms("2019-01-17 09:43:00.000"), true},
		{"1969-12-31 23:59:59.999", false, nil, -1, true},
		{"0000-01-01 00:00:00", false, nil, minMillis, true},
		{"9999-12-31 23:59:59.999", false, nil, maxMillis, true},
		{"1547718199000", false, nil, 1547718199000, true},
		{"-5", true, nil, -5, true},
		{"2019-01-17 09:43:19", true, shanghai, ms("2019-01-17 01:43:19.000"), true},
		{"2019-01-17 09:43:19", false, shanghai, ms("2019-01-17 09:43:19.000"), true},
		{"2019-01-17 09:43:19Z", true, shanghai, ms("2019-01-17 09:43:19.000"), true},
		{"2019-01-17 09:43:19Z", false, nil, 0, false},
		{"2019-02-29 00:00:00", false, nil, 0, false},
		{"2020-02-29 00:00:00", false, nil, ms("2020-02-29 00:00:00.000"), true},
		{"2019-13-01 00:00:00", false, nil, 0, false},
		{"2019-01-17 24:00:00", false, nil, 0, false},
		{"2019-01-17 09:60:00", false, nil, 0, false},
		{"2019-01-17 09:43:19.", false, nil, 0, false},
		{"2019-01-17 09:43:19.1234567890", false, nil, 0, false},
		{"2019-01-17", false, nil, 0, false},
		{"2019-1-17 09:43:19", false, nil, 0, false},
		{"99999999999999999", false, nil, 0, false},
		{"", false, nil, 0, false},
	} {
		got, r := parseTimestamp([]byte(tc.in), tc.ltz, tc.loc)
		if (r == "") != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseTimestamp(%q, ltz=%v) = %d, %q; want %d, ok=%v", tc.in, tc.ltz, got, r, tc.want, tc.ok)
		}
	}
}

func TestCivilDays(t *testing.T) {
	for days := int64(-800000); days < 3000000; days += 97 {
		y, m, d := civilFromDays(days)
		if back := daysFromCivil(y, m, d); back != days {
			t.Fatalf("days %d -> %d-%d-%d -> %d", days, y, m, d, back)
		}
		want := time.Unix(days*86400, 0).UTC()
		if want.Year() != y || int(want.Month()) != m || want.Day() != d {
			t.Fatalf("days %d: got %d-%d-%d, want %s", days, y, m, d, want)
		}
	}
	if d, r := parseDate([]byte("2019-01-17")); r != "" || d != 17913 {
		t.Errorf("parseDate = %d, %q", d, r)
	}
	for _, s := range []string{"2019-01-17 ", "2019-00-17", "2019-01-32", "19-01-17", "abcd-ef-gh"} {
		if _, r := parseDate([]byte(s)); r == "" {
			t.Errorf("parseDate(%q) succeeded", s)
		}
	}
}

func TestIndexByte(t *testing.T) {
	for n := 0; n < 80; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%7)
		}
		for at := -1; at < n; at++ {
			c := append([]byte(nil), b...)
			if at >= 0 {
				c[at] = ','
				if at+3 < n {
					c[at+3] = ','
				}
			}
			if got, want := indexByte(c, ','), bytes.IndexByte(c, ','); got != want {
				t.Fatalf("indexByte(%q) = %d, want %d", c, got, want)
			}
		}
	}
}
