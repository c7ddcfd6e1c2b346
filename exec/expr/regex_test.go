package expr

import (
	"math/rand"
	"regexp"
	"slices"
	"testing"
)

// TestRegexAgreesWithGo checks the literal skip against Go's engine run over the whole row,
// on rows built from the patterns' own literals, multi-byte runes and invalid bytes.
func TestRegexAgreesWithGo(t *testing.T) {
	patterns := []struct {
		p    string
		skip bool // whether the literal skip applies
	}{
		{`(&|^)channel_id=([^&]*)`, true},
		{`^ab`, true},
		{`x?ab(c|d)`, true},
		{`(a|bb|^)cd(.)`, true},
		{`.{0,3}cd`, true},
		{`(?i)cd`, false},
		{`[a-c]{2}(cd)+`, false},
		{`ab.*cd`, true},
		{`.*cd`, false},
		{`\bcd`, false},
		{`(?m)^cd`, false},
		{`é.cd$`, true},
		{`(?:x|y)??cd(?P<tail>a*)`, true},
		{`((a)|(b))cd((c)|$)`, true},
		{`cd`, false},
		{`[^€]{0,2}cd`, true},
		{`\x{FFFD}?.cd`, true},
	}
	pieces := []string{"a", "b", "c", "d", "cd", "&", "x", "é", "€", "\xff", "\x80", "channel_id=", "\n", " ", "ab"}
	rng := rand.New(rand.NewSource(1))
	rows := []string{"", "cd", "&channel_id=", "channel_id=7&x", "\xe9cd", "é\xffcd"}
	for range 3000 {
		var b []byte
		for range rng.Intn(10) {
			b = append(b, pieces[rng.Intn(len(pieces))]...)
		}
		rows = append(rows, string(b))
	}
	for _, pc := range patterns {
		r, err := compileRegex(pc.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.lit != ""; got != pc.skip {
			t.Errorf("%q: skip %v, want %v (literal %q)", pc.p, got, pc.skip, r.lit)
		}
		re := regexp.MustCompile(pc.p)
		for _, v := range rows {
			if got, want := r.submatchIndex(v), re.FindStringSubmatchIndex(v); !slices.Equal(got, want) {
				t.Fatalf("%q on %q: submatches %v, want %v", pc.p, v, got, want)
			}
			if got, want := r.index(v), re.FindStringIndex(v); !slices.Equal(got, want) {
				t.Fatalf("%q on %q: match %v, want %v", pc.p, v, got, want)
			}
			if got, want := r.matches(v), re.MatchString(v); got != want {
				t.Fatalf("%q on %q: matches %v, want %v", pc.p, v, got, want)
			}
			if !r.mayMatch(v) && re.MatchString(v) {
				t.Fatalf("%q on %q: matches but was skipped", pc.p, v)
			}
		}
	}
}

func BenchmarkRegexExtract(b *testing.B) {
	v := "https://www.nexmark.com/abcde/fghij/klmno/item.htm?query=1&channel_id=1234567"
	for _, skip := range []bool{false, true} {
		name := "go"
		if skip {
			name = "literal-skip"
		}
		b.Run(name, func(b *testing.B) {
			r, _ := compileRegex(`(&|^)channel_id=([^&]*)`)
			if !skip {
				r = &regex{Regexp: r.Regexp}
			}
			b.ReportAllocs()
			for b.Loop() {
				if r.submatchIndex(v) == nil {
					b.Fatal("no match")
				}
			}
		})
	}
}
