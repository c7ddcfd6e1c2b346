package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// GroupingSets is a grouping element of GROUP BY beside plain expressions: GROUPING SETS
// (...), ROLLUP (...), CUBE (...), or the empty grouping (). Each element of Elems is
// one element of the list: a parenthesised list of expressions, (a, b), a single
// expression, or (in GROUPING SETS) a nested GroupingSets as an element of one
// expression; () is an empty element.
type GroupingSets struct {
	Pos   Pos
	Kind  string // "GROUPING SETS", "ROLLUP", "CUBE", or "" for ()
	Elems [][]Expr
}

func (*GroupingSets) expr()           {}
func (n *GroupingSets) Position() Pos { return n.Pos }

func (n *GroupingSets) String() string {
	if n.Kind == "" {
		return "()"
	}
	parts := make([]string, len(n.Elems))
	for i, e := range n.Elems {
		if len(e) == 0 {
			parts[i] = "()"
			continue
		}
		_, nested := e[0].(*GroupingSets)
		if len(e) == 1 && (nested || n.Kind != "GROUPING SETS") {
			parts[i] = e[0].String()
		} else {
			parts[i] = "(" + exprList(e) + ")"
		}
	}
	return n.Kind + " (" + strings.Join(parts, ", ") + ")"
}

// groupItemG is one item of GROUP BY: an expression or a grouping element.
type groupItemG struct {
	Expr Expr
}

// Parse implements participle.Parseable.
func (g *groupItemG) Parse(lex *lexer.PeekingLexer) error {
	p := &exprParser{lex: lex}
	if !p.startsExpr() {
		return participle.NextMatch
	}
	e, err := p.groupingItem(false)
	if err != nil {
		return err
	}
	g.Expr = e
	return nil
}

// groupingItem parses an item of GROUP BY or an element of GROUPING SETS (nested true):
// a grouping element, () or an expression.
func (p *exprParser) groupingItem(nested bool) (Expr, error) {
	t := p.peek()
	switch {
	case isWord(t, "GROUPING") && isWord(p.peekAt(1), "SETS"):
		p.next()
		p.next()
		return p.groupingList(t.Pos, "GROUPING SETS", true)
	case (isWord(t, "ROLLUP") || isWord(t, "CUBE")) && isPunct(p.peekAt(1), "("):
		p.next()
		return p.groupingList(t.Pos, strings.ToUpper(t.Value), false)
	case isPunct(t, "(") && isPunct(p.peekAt(1), ")"):
		p.next()
		p.next()
		return &GroupingSets{Pos: t.Pos}, nil
	}
	return p.inner()
}

// groupingList parses the parenthesised elements of GROUPING SETS, ROLLUP or CUBE, after
// its name. Only GROUPING SETS (sets true) nests grouping elements.
func (p *exprParser) groupingList(pos Pos, kind string, sets bool) (Expr, error) {
	defer p.leave()
	if err := p.enter(); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	g := &GroupingSets{Pos: pos, Kind: kind}
	for {
		elem, err := p.groupingElem(sets)
		if err != nil {
			return nil, err
		}
		g.Elems = append(g.Elems, elem)
		if t := p.next(); !isPunct(t, ",") {
			if isPunct(t, ")") {
				return g, nil
			}
			return nil, unexpected(t, "')'", "','")
		}
	}
}

// groupingElem parses one element of a grouping list: (), (a, b, ...), a nested grouping
// element where sets allows one, or an expression. A parenthesis that opens an
// expression, (a + 1) * 2, is read as the expression.
func (p *exprParser) groupingElem(sets bool) ([]Expr, error) {
	t := p.peek()
	if isPunct(t, "(") {
		if isPunct(p.peekAt(1), ")") {
			p.next()
			p.next()
			return []Expr{}, nil
		}
		cp := p.lex.MakeCheckpoint()
		p.next()
		list, err := p.list()
		if n := p.peek(); err == nil && (isPunct(n, ",") || isPunct(n, ")")) {
			return list, nil
		}
		p.lex.LoadCheckpoint(cp)
	}
	if sets {
		e, err := p.groupingItem(true)
		if err != nil {
			return nil, err
		}
		return []Expr{e}, nil
	}
	e, err := p.inner()
	if err != nil {
		return nil, err
	}
	return []Expr{e}, nil
}

func groupExprs(items []*groupItemG) []Expr {
	if items == nil {
		return nil
	}
	out := make([]Expr, len(items))
	for i, it := range items {
		out[i] = it.Expr
	}
	return out
}
