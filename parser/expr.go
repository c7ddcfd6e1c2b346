package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// exprParser parses a scalar expression by precedence climbing, reading participle's token
// stream directly. It returns errors, never panics, and leaves the stream at the token it
// could not use, so that participle knows how far it got.
type exprParser struct {
	lex *lexer.PeekingLexer
	// noIn makes IN end the expression instead of starting an IN predicate. It is set for the
	// first argument of POSITION(a IN b) and cleared inside parentheses.
	noIn bool
	// depth counts nested expressions and unary operators, bounded by maxDepth.
	depth int
}

// maxDepth bounds the nesting of expressions (and, in tokenize, of parentheses), so that no
// input can exhaust the stack.
const maxDepth = 1000

// enter counts one more level of nesting; the caller defers p.leave().
func (p *exprParser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errorAt(p.peek().Pos, "expression nested too deeply")
	}
	return nil
}

func (p *exprParser) leave() { p.depth-- }

// Binding strength of operators, loosest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp    // = <> < <= > >=, IS, BETWEEN, IN, LIKE
	precConcat // ||
	precAdd    // + -
	precMul    // * / %
	precUnary  // unary - +
	precPrimary
)

// parseExpr is the grammar's hook for Expr fields (participle.ParseTypeWith). It returns
// participle.NextMatch when no expression starts at the current token, so that the grammar
// reports what it expected there.
func parseExpr(lex *lexer.PeekingLexer) (Expr, error) {
	p := &exprParser{lex: lex}
	if !p.startsExpr() {
		return nil, participle.NextMatch
	}
	return p.expr(precOr)
}

func (p *exprParser) peek() *lexer.Token { return p.lex.Peek() }
func (p *exprParser) next() *lexer.Token { return p.lex.Next() }

// peekAt returns the token n places after the current one.
func (p *exprParser) peekAt(n int) *lexer.Token {
	cp := p.lex.MakeCheckpoint()
	defer p.lex.LoadCheckpoint(cp)
	for range n {
		p.lex.Next()
	}
	return p.lex.Peek()
}

// expect consumes the punctuation or keyword s, or fails saying it expected alts (s when
// alts is empty).
func (p *exprParser) expect(s string, alts ...string) error {
	t := p.peek()
	if isPunct(t, s) || isKeyword(t, s) || isWord(t, s) {
		p.next()
		return nil
	}
	if len(alts) == 0 {
		alts = []string{show(s)}
	}
	return unexpectedOrNearMiss(t, alts)
}

// startsExpr reports whether an expression can start at the current token.
func (p *exprParser) startsExpr() bool {
	t := p.peek()
	switch t.Type {
	case tokIdent, tokQuotedIdent, tokNumber, tokString:
		return true
	case tokPunct:
		return t.Value == "(" || t.Value == "-" || t.Value == "+"
	case tokKeyword:
		switch kw := strings.ToUpper(t.Value); {
		case kw == "NOT" || kw == "NULL" || kw == "TRUE" || kw == "FALSE" || kw == "CASE" || niladic[kw]:
			return true
		case keywordFuncs[kw]:
			return isPunct(p.peekAt(1), "(")
		}
	}
	return false
}

// inner parses a whole expression nested in parentheses, where IN is an operator again.
func (p *exprParser) inner() (Expr, error) {
	saved := p.noIn
	p.noIn = false
	defer func() { p.noIn = saved }()
	return p.expr(precOr)
}

// expr parses an expression whose operators bind at least as tightly as minPrec.
func (p *exprParser) expr(minPrec int) (Expr, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	var (
		left Expr
		err  error
	)
	if t := p.peek(); minPrec <= precNot && isKeyword(t, "NOT") {
		p.next()
		x, err := p.expr(precNot)
		if err != nil {
			return nil, err
		}
		left = &UnaryExpr{Pos: t.Pos, Op: "NOT", X: x}
	} else if left, err = p.unary(); err != nil {
		return nil, err
	}
	for {
		prec := p.infixPrec()
		if prec == 0 || prec < minPrec {
			return left, nil
		}
		if left, err = p.infix(left, prec); err != nil {
			return nil, err
		}
	}
}

var binaryPrec = map[string]int{
	"OR": precOr, "AND": precAnd,
	"=": precCmp, "<>": precCmp, "!=": precCmp, "<": precCmp, "<=": precCmp, ">": precCmp, ">=": precCmp,
	"||": precConcat, "+": precAdd, "-": precAdd, "*": precMul, "/": precMul, "%": precMul,
	"OVERLAPS": precCmp,
}

// infixPrec returns the precedence of the operator at the current token, 0 if there is none.
func (p *exprParser) infixPrec() int {
	t := p.peek()
	switch t.Type {
	case tokPunct:
		return binaryPrec[t.Value]
	case tokIdent:
		if isWord(t, "SIMILAR") && isWord(p.peekAt(1), "TO") {
			return precCmp
		}
		// (a, b) OVERLAPS (c, d): a word, so only before a period, not as an alias.
		if isWord(t, "OVERLAPS") && (isPunct(p.peekAt(1), "(") || isWord(p.peekAt(1), "ROW")) {
			return precCmp
		}
	case tokKeyword:
		switch kw := strings.ToUpper(t.Value); kw {
		case "OR", "AND":
			return binaryPrec[kw]
		case "IS", "BETWEEN", "LIKE":
			return precCmp
		case "IN":
			if !p.noIn {
				return precCmp
			}
		case "NOT":
			n := p.peekAt(1)
			if isKeyword(n, "BETWEEN") || isKeyword(n, "LIKE") || (isKeyword(n, "IN") && !p.noIn) ||
				(isWord(n, "SIMILAR") && isWord(p.peekAt(2), "TO")) {
				return precCmp
			}
		}
	}
	return 0
}

// infix parses the operator at the current token, of precedence prec, applied to left.
func (p *exprParser) infix(left Expr, prec int) (Expr, error) {
	t := p.next()
	pos := left.Position()
	op := strings.ToUpper(t.Value)
	switch op {
	case "IS":
		is := &IsExpr{Pos: pos, X: left}
		if isKeyword(p.peek(), "NOT") {
			p.next()
			is.Not = true
		}
		w := p.peek()
		switch {
		case isKeyword(w, "DISTINCT"):
			p.next()
			if err := p.expect("FROM"); err != nil {
				return nil, err
			}
			from, err := p.expr(precCmp + 1)
			if err != nil {
				return nil, err
			}
			is.What, is.From = "DISTINCT FROM", from
			return is, nil
		case isWord(w, "JSON"):
			p.next()
			is.What = "JSON"
			for _, kind := range []string{"VALUE", "SCALAR", "ARRAY", "OBJECT"} {
				if isWord(p.peek(), kind) {
					p.next()
					if kind != "VALUE" { // VALUE is the default: print it away
						is.What += " " + kind
					}
				}
			}
			return is, nil
		case !isKeyword(w, "NULL") && !isKeyword(w, "TRUE") && !isKeyword(w, "FALSE") && !isWord(w, "UNKNOWN"):
			if is.Not {
				return nil, unexpected(w, "NULL", "TRUE", "FALSE", "UNKNOWN", "DISTINCT", "JSON")
			}
			return nil, unexpected(w, "NULL", "NOT", "TRUE", "FALSE", "UNKNOWN", "DISTINCT", "JSON")
		}
		p.next()
		is.What = strings.ToUpper(w.Value)
		return is, nil
	case "NOT":
		t = p.next() // BETWEEN, IN or LIKE: infixPrec checked
		return p.predicate(left, strings.ToUpper(t.Value), true)
	case "BETWEEN", "IN", "LIKE":
		return p.predicate(left, op, false)
	case "SIMILAR":
		return p.predicate(left, op, false)
	}
	if op == "!=" {
		op = "<>"
	}
	right, err := p.expr(prec + 1)
	if err != nil {
		return nil, err
	}
	return &BinaryExpr{Pos: pos, Op: op, Left: left, Right: right}, nil
}

// predicate parses the rest of x [NOT] BETWEEN|IN|LIKE ..., after the keyword.
func (p *exprParser) predicate(x Expr, kw string, not bool) (Expr, error) {
	switch kw {
	case "BETWEEN":
		symmetric := false
		if t := p.peek(); isWord(t, "SYMMETRIC") || isWord(t, "ASYMMETRIC") {
			p.next()
			symmetric = isWord(t, "SYMMETRIC")
		}
		low, err := p.expr(precConcat)
		if err != nil {
			return nil, err
		}
		if err := p.expect("AND"); err != nil {
			return nil, err
		}
		high, err := p.expr(precConcat)
		if err != nil {
			return nil, err
		}
		return &BetweenExpr{Pos: x.Position(), X: x, Low: low, High: high, Not: not, Symmetric: symmetric}, nil
	case "IN":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		if p.startsQuery(0) {
			q, err := p.subquery()
			if err != nil {
				return nil, err
			}
			return &InExpr{Pos: x.Position(), X: x, Query: q, Not: not}, nil
		}
		list, err := p.list()
		if err != nil {
			return nil, err
		}
		return &InExpr{Pos: x.Position(), X: x, List: list, Not: not}, nil
	default: // LIKE, SIMILAR TO
		similar := kw == "SIMILAR"
		if similar {
			p.next() // TO: infixPrec checked
		}
		pattern, err := p.expr(precConcat)
		if err != nil {
			return nil, err
		}
		like := &LikeExpr{Pos: x.Position(), X: x, Pattern: pattern, Not: not, Similar: similar}
		if isWord(p.peek(), "ESCAPE") && p.peekAt(1).Type == tokString {
			p.next()
			t := p.next()
			like.Escape = unquoteString(t.Value)
			if len([]rune(like.Escape)) != 1 {
				return nil, errorAt(t.Pos, "ESCAPE must be a single character")
			}
		}
		return like, nil
	}
}

// list parses `e, e, ...)` after an opening parenthesis.
func (p *exprParser) list() ([]Expr, error) {
	var list []Expr
	for {
		e, err := p.inner()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if t := p.next(); !isPunct(t, ",") {
			if isPunct(t, ")") {
				return list, nil
			}
			return nil, unexpected(t, "')'", "','")
		}
	}
}

// unary parses [- | +] ... primary.
func (p *exprParser) unary() (Expr, error) {
	t := p.peek()
	if !isPunct(t, "-") && !isPunct(t, "+") {
		return p.postfix()
	}
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.next()
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	return &UnaryExpr{Pos: t.Pos, Op: t.Value, X: x}, nil
}

// postfix parses a primary followed by any number of [index] and .field.
func (p *exprParser) postfix() (Expr, error) {
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	for {
		switch t := p.peek(); {
		case isPunct(t, "["):
			p.next()
			i, err := p.inner()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			x = &ItemExpr{Pos: x.Position(), X: x, Index: i}
		case isPunct(t, "."):
			p.next()
			f := p.peek()
			if !isName(f) {
				return nil, unexpected(f, "field name")
			}
			p.next()
			x = &FieldExpr{Pos: x.Position(), X: x, Name: identText(f)}
		default:
			return x, nil
		}
	}
}

// collection parses ARRAY[...] or MAP[...] at ARRAY or MAP.
func (p *exprParser) collection() (Expr, error) {
	t := p.next()
	c := &CollectionExpr{Pos: t.Pos, Kind: strings.ToUpper(t.Value)}
	p.next() // [
	if isPunct(p.peek(), "]") {
		p.next()
		return c, nil
	}
	for {
		e, err := p.inner()
		if err != nil {
			return nil, err
		}
		c.Elems = append(c.Elems, e)
		if t := p.next(); !isPunct(t, ",") {
			if isPunct(t, "]") {
				break
			}
			return nil, unexpected(t, "']'", "','")
		}
	}
	if c.Kind == "MAP" && len(c.Elems)%2 != 0 {
		return nil, errorAt(c.Pos, "MAP[...] takes keys and values in pairs")
	}
	return c, nil
}

func (p *exprParser) primary() (Expr, error) {
	t := p.peek()
	switch t.Type {
	case tokNumber:
		p.next()
		return &NumberLit{Pos: t.Pos, Text: t.Value}, nil
	case tokString:
		p.next()
		return &StringLit{Pos: t.Pos, Value: unquoteString(t.Value)}, nil
	case tokKeyword:
		switch kw := strings.ToUpper(t.Value); {
		case kw == "TRUE" || kw == "FALSE":
			p.next()
			return &BoolLit{Pos: t.Pos, Value: kw == "TRUE"}, nil
		case kw == "NULL":
			p.next()
			return &NullLit{Pos: t.Pos}, nil
		case kw == "CASE":
			return p.caseExpr()
		case niladic[kw]:
			return p.niladicCall()
		case keywordFuncs[kw] && isPunct(p.peekAt(1), "("):
			return p.call()
		}
	case tokIdent:
		n := p.peekAt(1)
		if isWord(t, "EXISTS") && isPunct(n, "(") && p.startsQuery(2) {
			p.next()
			p.next()
			q, err := p.subquery()
			if err != nil {
				return nil, err
			}
			return &ExistsExpr{Pos: t.Pos, Query: q}, nil
		}
		if n.Type == tokString {
			switch kw := strings.ToUpper(t.Value); kw {
			case "INTERVAL":
				return p.interval()
			case "TIMESTAMP", "DATE", "TIME":
				p.next()
				p.next()
				return &TypedLit{Pos: t.Pos, Type: kw, Value: unquoteString(n.Value)}, nil
			}
		}
		if isPunct(n, "(") {
			return p.call()
		}
		if isPunct(n, "[") && (isWord(t, "ARRAY") || isWord(t, "MAP")) {
			return p.collection()
		}
		return p.ident()
	case tokQuotedIdent:
		if isPunct(p.peekAt(1), "(") {
			return p.call()
		}
		return p.ident()
	case tokPunct:
		if t.Value == "(" {
			p.next()
			if p.startsQuery(0) {
				q, err := p.subquery()
				if err != nil {
					return nil, err
				}
				return &SubqueryExpr{Pos: t.Pos, Query: q}, nil
			}
			x, err := p.inner()
			if err != nil {
				return nil, err
			}
			if isPunct(p.peek(), ",") { // (a, b) constructs a ROW
				p.next()
				rest, err := p.list()
				if err != nil {
					return nil, err
				}
				return &FuncCall{Pos: t.Pos, Name: "ROW", Args: append([]Expr{x}, rest...)}, nil
			}
			return x, p.expect(")")
		}
	}
	return nil, unexpected(t, "expression")
}

// startsQuery reports whether a query starts n tokens after the current one: SELECT,
// WITH name, or VALUES (.
func (p *exprParser) startsQuery(n int) bool {
	t := p.peekAt(n)
	switch {
	case isKeyword(t, "SELECT"):
		return true
	case isWord(t, "WITH"):
		return isName(p.peekAt(n + 1))
	case isWord(t, "VALUES"):
		return isPunct(p.peekAt(n+1), "(")
	}
	return false
}

// subquery parses `query)` after an opening parenthesis, through the query grammar.
func (p *exprParser) subquery() (*Query, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	g, err := parseSubquery(p.lex)
	if err != nil {
		return nil, err
	}
	q, err := g.toAST()
	if err != nil {
		return nil, err
	}
	return q, p.expect(")")
}

// ident parses a possibly qualified column reference a.b.c.
func (p *exprParser) ident() (Expr, error) {
	t := p.next()
	id := &Ident{Pos: t.Pos, Parts: []string{identText(t)}}
	for isPunct(p.peek(), ".") {
		p.next()
		t = p.peek()
		if !isName(t) {
			return nil, unexpected(t, "identifier")
		}
		p.next()
		id.Parts = append(id.Parts, identText(t))
	}
	return id, nil
}

// caseExpr parses CASE [operand] WHEN cond THEN result ... [ELSE result] END.
func (p *exprParser) caseExpr() (Expr, error) {
	c := &CaseExpr{Pos: p.next().Pos}
	var err error
	if !isKeyword(p.peek(), "WHEN") {
		if c.Operand, err = p.inner(); err != nil {
			return nil, err
		}
	}
	for isKeyword(p.peek(), "WHEN") {
		w := &WhenClause{Pos: p.next().Pos}
		if w.Cond, err = p.inner(); err != nil {
			return nil, err
		}
		for c.Operand != nil && isPunct(p.peek(), ",") {
			p.next()
			v, err := p.inner()
			if err != nil {
				return nil, err
			}
			w.Also = append(w.Also, v)
		}
		if err = p.expect("THEN"); err != nil {
			return nil, err
		}
		if w.Result, err = p.inner(); err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, w)
	}
	if len(c.Whens) == 0 {
		return nil, unexpectedOrNearMiss(p.peek(), []string{"WHEN"})
	}
	if isKeyword(p.peek(), "ELSE") {
		p.next()
		if c.Else, err = p.inner(); err != nil {
			return nil, err
		}
		return c, p.expect("END")
	}
	return c, p.expect("END", "WHEN", "ELSE", "END")
}

// intervalUnits are the units of INTERVAL literals, largest first.
var intervalUnits = []string{"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}

// intervalRanges are the allowed `unit TO unit` pairs.
var intervalRanges = map[string]bool{
	"YEAR TO MONTH": true, "DAY TO HOUR": true, "DAY TO MINUTE": true, "DAY TO SECOND": true,
	"HOUR TO MINUTE": true, "HOUR TO SECOND": true, "MINUTE TO SECOND": true,
}

// isIntervalUnit reports whether t is an interval unit, singular or, as Flink's
// examples write them, plural (MINUTES).
func isIntervalUnit(t *lexer.Token) bool {
	for _, u := range intervalUnits {
		if isWord(t, u) || isWord(t, u+"S") {
			return true
		}
	}
	return false
}

// interval parses INTERVAL 'value' unit [TO unit].
func (p *exprParser) interval() (Expr, error) {
	lit := &IntervalLit{Pos: p.next().Pos, Value: unquoteString(p.next().Value)}
	t := p.peek()
	if !isIntervalUnit(t) {
		return nil, unexpectedOrNearMiss(t, intervalUnits)
	}
	p.next()
	lit.Unit = strings.TrimSuffix(strings.ToUpper(t.Value), "S")
	if isWord(p.peek(), "TO") && isIntervalUnit(p.peekAt(1)) {
		p.next()
		t = p.next()
		lit.ToUnit = strings.TrimSuffix(strings.ToUpper(t.Value), "S")
		if r := lit.Unit + " TO " + lit.ToUnit; !intervalRanges[r] {
			return nil, errorAt(t.Pos, "invalid interval qualifier "+r)
		}
	}
	return lit, nil
}
