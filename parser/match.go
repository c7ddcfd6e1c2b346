package parser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// MatchRecognize is `input MATCH_RECOGNIZE (...) [AS] alias` in FROM: row pattern
// recognition over the rows of Input, partitioned and ordered, one row per match.
// None of its words is reserved: MATCH_RECOGNIZE is read only after a table and before
// '(', the others only where the clause expects them.
type MatchRecognize struct {
	Pos         Pos
	Input       TableExpr // a table or a parenthesised query, without an alias
	PartitionBy []Expr
	OrderBy     []OrderItem
	Measures    []*Measure
	Rows        string // "", "ONE" (ONE ROW PER MATCH) or "ALL" (ALL ROWS PER MATCH)
	Skip        *AfterMatch
	Pattern     *RowPattern
	Within      Expr // WITHIN's interval; nil when absent
	Define      []*PatternDefine
	Alias       string
}

// Measure is one `expr AS name` of MEASURES.
type Measure struct {
	Pos   Pos
	Expr  Expr
	Alias string
}

// AfterMatch is AFTER MATCH SKIP ...: Kind is "PAST LAST ROW", "TO NEXT ROW", "TO FIRST"
// or "TO LAST" (also for SKIP TO v), Var the variable of the last two.
type AfterMatch struct {
	Pos  Pos
	Kind string
	Var  string
}

// RowPattern is a pattern: alternatives (a|b), each a sequence of factors.
type RowPattern struct {
	Pos  Pos
	Alts [][]*PatternFactor
}

// PatternFactor is a variable or a parenthesised pattern with its quantifier: between
// Min and Max rows or repetitions (Max -1 for no bound; 1 and 1 without a quantifier),
// greedy unless Reluctant.
type PatternFactor struct {
	Pos       Pos
	Var       string      // "" for a group
	Group     *RowPattern // nil for a variable
	Min, Max  int
	Reluctant bool
}

// PatternDefine is `var AS condition` of DEFINE.
type PatternDefine struct {
	Pos  Pos
	Var  string
	Cond Expr
}

func (*MatchRecognize) tableExpr()      {}
func (n *MatchRecognize) Position() Pos { return n.Pos }
func (n *Measure) Position() Pos        { return n.Pos }
func (n *PatternDefine) Position() Pos  { return n.Pos }
func (n *RowPattern) Position() Pos     { return n.Pos }
func (n *PatternFactor) Position() Pos  { return n.Pos }
func (n *AfterMatch) Position() Pos     { return n.Pos }

func (n *MatchRecognize) String() string {
	var b strings.Builder
	b.WriteString(n.Input.String())
	b.WriteString(" MATCH_RECOGNIZE (")
	if len(n.PartitionBy) > 0 {
		b.WriteString("PARTITION BY " + exprList(n.PartitionBy) + " ")
	}
	if len(n.OrderBy) > 0 {
		parts := make([]string, len(n.OrderBy))
		for i, o := range n.OrderBy {
			parts[i] = o.String()
		}
		b.WriteString("ORDER BY " + strings.Join(parts, ", ") + " ")
	}
	if len(n.Measures) > 0 {
		parts := make([]string, len(n.Measures))
		for i, m := range n.Measures {
			parts[i] = m.String()
		}
		b.WriteString("MEASURES " + strings.Join(parts, ", ") + " ")
	}
	switch n.Rows {
	case "ONE":
		b.WriteString("ONE ROW PER MATCH ")
	case "ALL":
		b.WriteString("ALL ROWS PER MATCH ")
	}
	if n.Skip != nil {
		b.WriteString(n.Skip.String() + " ")
	}
	b.WriteString("PATTERN (" + n.Pattern.String() + ")")
	if n.Within != nil {
		b.WriteString(" WITHIN " + n.Within.String())
	}
	parts := make([]string, len(n.Define))
	for i, d := range n.Define {
		parts[i] = d.String()
	}
	b.WriteString(" DEFINE " + strings.Join(parts, ", ") + ")")
	b.WriteString(alias(n.Alias))
	return b.String()
}

func (n *Measure) String() string { return n.Expr.String() + " AS " + quoteIdent(n.Alias) }

func (n *PatternDefine) String() string { return quoteIdent(n.Var) + " AS " + n.Cond.String() }

func (n *AfterMatch) String() string {
	s := "AFTER MATCH SKIP " + n.Kind
	if n.Var != "" {
		s += " " + quoteIdent(n.Var)
	}
	return s
}

func (n *RowPattern) String() string {
	alts := make([]string, len(n.Alts))
	for i, seq := range n.Alts {
		parts := make([]string, len(seq))
		for j, f := range seq {
			parts[j] = f.String()
		}
		alts[i] = strings.Join(parts, " ")
	}
	return strings.Join(alts, " | ")
}

func (n *PatternFactor) String() string {
	s := quoteIdent(n.Var)
	if n.Group != nil {
		s = "(" + n.Group.String() + ")"
	}
	return s + n.Quantifier()
}

// Quantifier is the factor's quantifier as written canonically: "" for exactly one row.
func (n *PatternFactor) Quantifier() string {
	var q string
	switch {
	case n.Min == 1 && n.Max == 1:
		return ""
	case n.Min == 0 && n.Max == -1:
		q = "*"
	case n.Min == 1 && n.Max == -1:
		q = "+"
	case n.Min == 0 && n.Max == 1:
		q = "?"
	case n.Min == n.Max:
		q = fmt.Sprintf("{%d}", n.Min)
	case n.Max == -1:
		q = fmt.Sprintf("{%d,}", n.Min)
	default:
		q = fmt.Sprintf("{%d,%d}", n.Min, n.Max)
	}
	if n.Reluctant {
		q += "?"
	}
	return q
}

// matchRecognizeG reads MATCH_RECOGNIZE ( ... ) after a table in FROM.
type matchRecognizeG struct {
	M *MatchRecognize
}

// Parse implements participle.Parseable.
func (g *matchRecognizeG) Parse(lex *lexer.PeekingLexer) error {
	start := lex.Peek()
	cp := lex.MakeCheckpoint()
	if !isWord(lex.Next(), "MATCH_RECOGNIZE") || !isPunct(lex.Peek(), "(") {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	lex.Next()
	p := &exprParser{lex: lex}
	m := &MatchRecognize{Pos: start.Pos}
	if isWord(lex.Peek(), "PARTITION") {
		lex.Next()
		if err := p.expect("BY"); err != nil {
			return err
		}
		list, err := p.exprs()
		if err != nil {
			return err
		}
		m.PartitionBy = list
	}
	if isKeyword(lex.Peek(), "ORDER") {
		lex.Next()
		if err := p.expect("BY"); err != nil {
			return err
		}
		for {
			if !p.startsExpr() {
				return unexpected(lex.Peek(), "expression")
			}
			e, err := p.expr(precOr)
			if err != nil {
				return err
			}
			item := OrderItem{Expr: e}
			if t := lex.Peek(); isWord(t, "ASC") || isWord(t, "DESC") {
				item.Desc = isWord(t, "DESC")
				lex.Next()
			}
			m.OrderBy = append(m.OrderBy, item)
			if !isPunct(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
	}
	if isWord(lex.Peek(), "MEASURES") {
		lex.Next()
		for {
			t := lex.Peek()
			if !p.startsExpr() {
				return unexpected(t, "expression")
			}
			e, err := p.expr(precOr)
			if err != nil {
				return err
			}
			if err := p.expect("AS"); err != nil {
				return err
			}
			name := lex.Next()
			if !isName(name) {
				return unexpected(name, "measure name")
			}
			m.Measures = append(m.Measures, &Measure{Pos: t.Pos, Expr: e, Alias: identText(name)})
			if !isPunct(lex.Peek(), ",") {
				break
			}
			lex.Next()
		}
	}
	if t := lex.Peek(); isWord(t, "ONE") || isKeyword(t, "ALL") {
		lex.Next()
		m.Rows = "ONE"
		row := "ROW"
		if isKeyword(t, "ALL") {
			m.Rows, row = "ALL", "ROWS"
		}
		for _, w := range []string{row, "PER", "MATCH"} {
			if err := p.expect(w); err != nil {
				return err
			}
		}
	}
	if t := lex.Peek(); isWord(t, "AFTER") {
		lex.Next()
		skip, err := p.afterMatch(t.Pos)
		if err != nil {
			return err
		}
		m.Skip = skip
	}
	if t := lex.Peek(); !isWord(t, "PATTERN") {
		return unexpected(t, "PATTERN")
	}
	lex.Next()
	if err := p.expect("("); err != nil {
		return err
	}
	pat, err := p.rowPattern()
	if err != nil {
		return err
	}
	m.Pattern = pat
	if err := p.expect(")"); err != nil {
		return err
	}
	if isWord(lex.Peek(), "WITHIN") {
		lex.Next()
		if !p.startsExpr() {
			return unexpected(lex.Peek(), "INTERVAL")
		}
		e, err := p.expr(precOr)
		if err != nil {
			return err
		}
		m.Within = e
	}
	if t := lex.Peek(); isWord(t, "SUBSET") {
		return errorAt(t.Pos, "SUBSET is not supported in MATCH_RECOGNIZE")
	}
	if t := lex.Peek(); !isWord(t, "DEFINE") {
		return unexpected(t, "DEFINE")
	}
	lex.Next()
	for {
		t := lex.Next()
		if !isName(t) {
			return unexpected(t, "pattern variable")
		}
		if err := p.expect("AS"); err != nil {
			return err
		}
		if !p.startsExpr() {
			return unexpected(lex.Peek(), "condition")
		}
		cond, err := p.expr(precOr)
		if err != nil {
			return err
		}
		m.Define = append(m.Define, &PatternDefine{Pos: t.Pos, Var: identText(t), Cond: cond})
		if !isPunct(lex.Peek(), ",") {
			break
		}
		lex.Next()
	}
	if err := p.expect(")", "','", "')'"); err != nil {
		return err
	}
	g.M = m
	return nil
}

// exprs reads a comma-separated list of expressions.
func (p *exprParser) exprs() ([]Expr, error) {
	var list []Expr
	for {
		if !p.startsExpr() {
			return nil, unexpected(p.peek(), "expression")
		}
		e, err := p.expr(precOr)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !isPunct(p.peek(), ",") {
			return list, nil
		}
		p.next()
	}
}

// afterMatch reads MATCH SKIP ... after AFTER.
func (p *exprParser) afterMatch(pos Pos) (*AfterMatch, error) {
	for _, w := range []string{"MATCH", "SKIP"} {
		if err := p.expect(w); err != nil {
			return nil, err
		}
	}
	a := &AfterMatch{Pos: pos}
	switch t := p.next(); {
	case isWord(t, "PAST"):
		for _, w := range []string{"LAST", "ROW"} {
			if err := p.expect(w); err != nil {
				return nil, err
			}
		}
		a.Kind = "PAST LAST ROW"
	case isWord(t, "TO"):
		switch u := p.peek(); {
		case isWord(u, "NEXT") && isWord(p.peekAt(1), "ROW"):
			p.next()
			p.next()
			a.Kind = "TO NEXT ROW"
			return a, nil
		case (isWord(u, "FIRST") || isWord(u, "LAST")) && isName(p.peekAt(1)):
			p.next()
			a.Kind = "TO " + strings.ToUpper(u.Value)
		default:
			a.Kind = "TO LAST"
		}
		v := p.next()
		if !isName(v) {
			return nil, unexpected(v, "NEXT ROW", "FIRST", "LAST", "pattern variable")
		}
		a.Var = identText(v)
	default:
		return nil, unexpected(t, "PAST LAST ROW", "TO")
	}
	return a, nil
}

// rowPattern reads alternatives separated by '|', up to the ')' that closes them.
func (p *exprParser) rowPattern() (*RowPattern, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	r := &RowPattern{Pos: p.peek().Pos}
	for {
		var seq []*PatternFactor
		for {
			t := p.peek()
			if !isName(t) && !isPunct(t, "(") {
				break
			}
			f, err := p.patternFactor()
			if err != nil {
				return nil, err
			}
			seq = append(seq, f)
		}
		if len(seq) == 0 {
			return nil, unexpected(p.peek(), "pattern variable", "'('")
		}
		r.Alts = append(r.Alts, seq)
		if !isPunct(p.peek(), "|") {
			return r, nil
		}
		p.next()
	}
}

// patternFactor reads a variable or a group and its quantifier.
func (p *exprParser) patternFactor() (*PatternFactor, error) {
	t := p.next()
	f := &PatternFactor{Pos: t.Pos, Min: 1, Max: 1}
	if isPunct(t, "(") {
		g, err := p.rowPattern()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")", "')'", "'|'", "pattern variable"); err != nil {
			return nil, err
		}
		f.Group = g
	} else {
		f.Var = identText(t)
	}
	q := p.peek()
	switch {
	case isPunct(q, "*"):
		f.Min, f.Max = 0, -1
	case isPunct(q, "+"):
		f.Min, f.Max = 1, -1
	case isPunct(q, "?"):
		f.Min, f.Max = 0, 1
	case isPunct(q, "{"):
		p.next()
		lo, hi, err := p.bounds()
		if err != nil {
			return nil, err
		}
		if hi != -1 && (hi < lo || hi == 0) {
			return nil, errorAt(q.Pos, fmt.Sprintf("quantifier {%d,%d} matches no rows", lo, hi))
		}
		f.Min, f.Max = lo, hi
		if isPunct(p.peek(), "?") {
			p.next()
			f.Reluctant = true
		}
		return f, nil
	default:
		return f, nil
	}
	p.next()
	if isPunct(p.peek(), "?") {
		p.next()
		f.Reluctant = true
	}
	return f, nil
}

// bounds reads n}, n,}, n,m} or ,m} after '{'; hi is -1 without a bound.
func (p *exprParser) bounds() (lo, hi int, err error) {
	num := func() (int, bool, error) {
		t := p.peek()
		if t.Type != tokNumber {
			return 0, false, nil
		}
		p.next()
		n, err := strconv.Atoi(t.Value)
		if err != nil || n > 1_000_000 {
			return 0, false, errorAt(t.Pos, "quantifier bound "+t.Value+" is not a whole number up to 1000000")
		}
		return n, true, nil
	}
	lo, haveLo, err := num()
	if err != nil {
		return 0, 0, err
	}
	if isPunct(p.peek(), "}") {
		if !haveLo {
			return 0, 0, unexpected(p.peek(), "number")
		}
		p.next()
		if lo == 0 {
			return 0, 0, errorAt(p.peek().Pos, "quantifier {0} matches no rows")
		}
		return lo, lo, nil
	}
	if err := p.expect(",", "','", "'}'"); err != nil {
		return 0, 0, err
	}
	hi, haveHi, err := num()
	if err != nil {
		return 0, 0, err
	}
	if !haveLo && !haveHi {
		return 0, 0, unexpected(p.peek(), "number")
	}
	if !haveHi {
		hi = -1
	}
	if err := p.expect("}", "'}'"); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}
