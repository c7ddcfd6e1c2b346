package parser

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// queryStmtG is a query used as a statement.
type queryStmtG struct {
	Pos   Pos
	Query *queryExprG `parser:"@@"`
}

func (g *queryStmtG) toAST() (Stmt, error) {
	q, err := g.Query.toAST()
	if err != nil {
		return nil, err
	}
	return &QueryStmt{Pos: g.Pos, Query: q}, nil
}

// queryExprG is a query: a SELECT block, possibly parenthesised. Set operations (UNION, ...)
// will be added here.
type queryExprG struct {
	Paren  *queryExprG `parser:"  '(' @@ ')'"`
	Select *selectG    `parser:"| @@"`
}

func (g *queryExprG) toAST() (*Query, error) {
	if g.Paren != nil {
		return g.Paren.toAST()
	}
	return g.Select.toAST()
}

type selectG struct {
	Pos      Pos
	Distinct bool           `parser:"'SELECT' ( @'DISTINCT' | 'ALL' )?"`
	Items    []*selectItemG `parser:"@@ ( ',' @@ )*"`
	From     *tableRefG     `parser:"( 'FROM' @@ )?"`
	Where    Expr           `parser:"( 'WHERE' @@ )?"`
	GroupBy  []Expr         `parser:"( 'GROUP' 'BY' @@ ( ',' @@ )* )?"`
	Having   Expr           `parser:"( 'HAVING' @@ )?"`
}

func (g *selectG) toAST() (*Query, error) {
	q := &Query{Pos: g.Pos, Distinct: g.Distinct, Where: g.Where, GroupBy: g.GroupBy,
		Having: g.Having}
	for _, it := range g.Items {
		item := &SelectItem{Pos: it.Pos, Star: it.Star, Expr: it.Expr}
		if it.Qualifier != nil {
			item.Star, item.Qualifier = true, it.Qualifier.Qualifier
		}
		if it.Alias != nil {
			item.Alias = it.Alias.Name
		}
		q.Items = append(q.Items, item)
	}
	if g.From != nil {
		from, err := g.From.toAST()
		if err != nil {
			return nil, err
		}
		q.From = from
	}
	return q, nil
}

// selectItemG is `*`, `t.*` or `expr [[AS] alias]`.
type selectItemG struct {
	Pos       Pos
	Star      bool           `parser:"(   @'*'"`
	Qualifier *qualifiedStar `parser:"  | @@"`
	Expr      Expr           `parser:"  | @@"`
	Alias     *identG        `parser:"    ( 'AS'? @@ )? )"`
}

// qualifiedStar is `t.*`. It looks past the dot, and matches nothing for `t.a`.
type qualifiedStar struct {
	Qualifier string
}

// Parse implements participle.Parseable.
func (g *qualifiedStar) Parse(lex *lexer.PeekingLexer) error {
	cp := lex.MakeCheckpoint()
	if t := lex.Next(); isName(t) && isPunct(lex.Next(), ".") && isPunct(lex.Next(), "*") {
		g.Qualifier = identText(t)
		return nil
	}
	lex.LoadCheckpoint(cp)
	return participle.NextMatch
}

// tableRefG is what FROM reads: a table or a parenthesised query, with an optional alias.
// Joins and table functions will be added here.
type tableRefG struct {
	Pos   Pos
	Sub   *queryExprG `parser:"( '(' @@ ')'"`
	Name  *identG     `parser:"| @@ )"`
	Alias *identG     `parser:"( 'AS'? @@ )?"`
}

func (g *tableRefG) toAST() (TableExpr, error) {
	var alias string
	if g.Alias != nil {
		alias = g.Alias.Name
	}
	if g.Sub != nil {
		q, err := g.Sub.toAST()
		if err != nil {
			return nil, err
		}
		return &SubqueryTable{Pos: g.Pos, Query: q, Alias: alias}, nil
	}
	return &TableName{Pos: g.Pos, Name: g.Name.Name, Alias: alias}, nil
}
