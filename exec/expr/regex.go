package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// regex is a compiled pattern that skips, before running Go's engine, the part of a row no
// match can start in. Go's engine skips ahead only to a literal the pattern starts with; an
// unanchored pattern such as '(&|^)channel_id=([^&]*)' is otherwise tried at every position
// of every row. When the pattern is a sequence holding a literal after a part of bounded
// width, every match starts at most that width before an occurrence of the literal, so a
// row without the literal has no match and the search starts just before its first one.
type regex struct {
	*regexp.Regexp
	lit   string         // the literal every match holds; "" when there is none to use
	width int            // the most bytes a match spans before lit
	later *regexp.Regexp // the pattern with ^ never matching, for a search starting past 0
}

func compileRegex(p string) (*regex, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	r := &regex{Regexp: re}
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return r, nil
	}
	tree = tree.Simplify()
	lit, width := requiredLiteral(tree)
	if len(lit) < 2 {
		return r, nil
	}
	later, err := regexp.Compile(withoutBeginText(tree).String())
	if err != nil || later.NumSubexp() != re.NumSubexp() {
		return r, nil
	}
	r.lit, r.width, r.later = lit, width, later
	return r, nil
}

// start is where a search of v can begin and the engine to run from there; ok is false
// when v holds no match.
func (r *regex) start(v string) (from int, re *regexp.Regexp, ok bool) {
	if r.lit == "" {
		return 0, r.Regexp, true
	}
	at := strings.Index(v, r.lit)
	if at < 0 {
		return 0, nil, false
	}
	// from may fall inside a rune, where the engine reads its continuation bytes as
	// invalid runes of one byte each; as maxWidth counts every rune as utf8.UTFMax bytes, no
	// match starting there reaches the literal.
	from = max(0, at-r.width)
	if from == 0 {
		return 0, r.Regexp, true
	}
	return from, r.later, true
}

// mayMatch is false when v holds no match.
func (r *regex) mayMatch(v string) bool {
	return r.lit == "" || strings.Contains(v, r.lit)
}

// submatchIndex is FindStringSubmatchIndex.
func (r *regex) submatchIndex(v string) []int {
	from, re, ok := r.start(v)
	if !ok {
		return nil
	}
	m := re.FindStringSubmatchIndex(v[from:])
	if from > 0 {
		for i := range m {
			if m[i] >= 0 {
				m[i] += from
			}
		}
	}
	return m
}

// index is FindStringIndex.
func (r *regex) index(v string) []int {
	from, re, ok := r.start(v)
	if !ok {
		return nil
	}
	m := re.FindStringIndex(v[from:])
	if m != nil {
		m[0], m[1] = m[0]+from, m[1]+from
	}
	return m
}

// matches is MatchString.
func (r *regex) matches(v string) bool {
	from, re, ok := r.start(v)
	return ok && re.MatchString(v[from:])
}

// requiredLiteral is the longest case-sensitive literal among the parts of a sequence
// pattern (captures looked through) that follows parts of bounded width, and that width.
func requiredLiteral(t *syntax.Regexp) (string, int) {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	if t.Op != syntax.OpConcat {
		return "", 0
	}
	best, bestWidth, width := "", 0, 0
	for _, s := range t.Sub {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 && !strings.ContainsRune(string(s.Rune), utf8.RuneError) {
			if lit := string(s.Rune); len(lit) > len(best) {
				best, bestWidth = lit, width
			}
		}
		w, bounded := maxWidth(s)
		if !bounded {
			break
		}
		width += w
	}
	return best, bestWidth
}

// maxWidth is the most bytes t matches, and false when that is unbounded. Every rune counts
// as utf8.UTFMax bytes, which bounds an invalid byte as well. A word boundary or ^ of a line
// counts as unbounded too: it looks at the byte before, which a search starting past 0
// does not see.
func maxWidth(t *syntax.Regexp) (int, bool) {
	const limit = 1 << 16
	switch t.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpEndLine, syntax.OpNoMatch:
		return 0, true
	case syntax.OpLiteral:
		return utf8.UTFMax * len(t.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(t.Sub[0])
	case syntax.OpRepeat:
		w, ok := maxWidth(t.Sub[0])
		if !ok || t.Max < 0 || w*t.Max > limit {
			return 0, false
		}
		return w * t.Max, true
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, s := range t.Sub {
			w, ok := maxWidth(s)
			if !ok {
				return 0, false
			}
			if t.Op == syntax.OpConcat {
				total += w
			} else {
				total = max(total, w)
			}
		}
		return total, total <= limit
	}
	return 0, false // star, plus and anything new
}

// withoutBeginText is a copy of t in which ^ (of the text) never matches.
func withoutBeginText(t *syntax.Regexp) *syntax.Regexp {
	c := *t
	if c.Op == syntax.OpBeginText {
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	}
	c.Sub = make([]*syntax.Regexp, len(t.Sub))
	for i, s := range t.Sub {
		c.Sub[i] = withoutBeginText(s)
	}
	return &c
}
