package expr

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestParseInt compares parseInt with strconv on random numeric-looking text.
func TestParseInt(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := "0123456789000000000-+. x/:"
	cases := []string{"", "+", "-", "0", "-0", "007", "1.", "1.5", ".5", "1.2.3", "1e3", " 12 ",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"123456789012345678", "1234567890123456789", "99999999", "100000000"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		n := r.Intn(22)
		for k := 0; k < n; k++ {
			if r.Intn(10) == 0 {
				b.WriteByte(alphabet[r.Intn(len(alphabet))])
			} else {
				b.WriteByte(byte('0' + r.Intn(10)))
			}
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		got, ok := parseInt(s)
		// The reference: strconv after Flink's trimming and dropping of a digit fraction.
		t2 := strings.TrimSpace(s)
		if k := strings.IndexByte(t2, '.'); k >= 0 {
			frac := t2[k+1:]
			if strings.Trim(frac, "0123456789") == "" {
				t2 = t2[:k]
			}
		}
		want, err := strconv.ParseInt(t2, 10, 64)
		wantOK := err == nil && !strings.ContainsAny(t2, "_") && t2 != "" && t2 != "+" && t2 != "-"
		if ok != wantOK || (ok && got != want) {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	}
}

func TestAppendDouble(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{35.8, "35.8"}, {100, "100.0"}, {1e20, "1.0E20"}, {-1e-5, "-1.0E-5"}, {0.001, "0.001"},
		{1e7, "1.0E7"}, {9999999, "9999999.0"}, {123456789.5, "1.234567895E8"}, {0, "0.0"},
		{math.Copysign(0, -1), "-0.0"}, {math.NaN(), "NaN"}, {math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"}, {math.MaxFloat64, "1.7976931348623157E308"},
	} {
		if got := string(appendDouble(nil, tc.f)); got != tc.want {
			t.Errorf("appendDouble(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestDecimalText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		p, s int
		want string // "" when it does not convert
	}{
		{"1.005", 5, 2, "1.01"}, {"-1.005", 5, 2, "-1.01"}, {"1.004", 5, 2, "1.00"}, {" 12 ", 4, 1, "12.0"},
		{"1e2", 5, 0, "100"}, {"1.5E-1", 3, 2, "0.15"}, {"0.0000001", 5, 2, "0.00"}, {"-0.004", 3, 2, "0.00"},
		{"999.995", 5, 2, ""}, {"999.994", 5, 2, "999.99"}, {"abc", 5, 2, ""}, {"1.2.3", 5, 2, ""},
		{"", 5, 2, ""}, {"-", 5, 2, ""}, {"1e", 5, 2, ""},
		{"12345678901234567890123456789.123456789", 38, 9, "12345678901234567890123456789.123456789"},
		{"-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999"},
		{"100000000000000000000000000000000000000", 38, 0, ""},
	} {
		d, ok := parseDecimal(tc.in, tc.p, tc.s)
		got := ""
		if ok {
			got = string(appendDecimal(nil, d, tc.s))
		}
		if got != tc.want {
			t.Errorf("parseDecimal(%q, %d, %d) = %q, want %q", tc.in, tc.p, tc.s, got, tc.want)
		}
	}
}
