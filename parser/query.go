package parser

import (
	"strings"

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

// queryExprG is a query: [WITH ...] a body of SELECT blocks, VALUES and parenthesised
// queries combined by set operations, then ORDER BY and LIMIT.
type queryExprG struct {
	With *withG `parser:"  @@"`
	Body *bodyG `parser:"| @@"`
}

// bodyG is a query without WITH: terms combined by set operations, ordered and limited.
type bodyG struct {
	First   *termG        `parser:"@@"`
	Ops     []*setOpG     `parser:"@@*"`
	OrderBy []*orderItemG `parser:"( 'ORDER' 'BY' @@ ( ',' @@ )* )?"`
	Limit   Expr          `parser:"( 'LIMIT' @@ )?"`
}

// setOpG is one UNION, INTERSECT or EXCEPT [ALL | DISTINCT] and its right operand.
type setOpG struct {
	Pos   Pos
	Op    string `parser:"@( 'UNION' | 'INTERSECT' | 'EXCEPT' )"`
	All   bool   `parser:"( @'ALL' | 'DISTINCT' )?"`
	Right *termG `parser:"@@"`
}

// termG is an operand of a set operation.
type termG struct {
	Paren  *queryExprG `parser:"  '(' @@ ')'"`
	Select *selectG    `parser:"| @@"`
	Values *valuesG    `parser:"| @@"`
}

// valuesG is VALUES row, ...: each row an expression, (a, b) being a row of two columns.
type valuesG struct {
	Pos  Pos
	Rows []Expr `parser:"'VALUES' @@ ( ',' @@ )*"`
}

// orderItemG is one ORDER BY expression and its direction.
type orderItemG struct {
	Expr Expr   `parser:"@@"`
	Dir  string `parser:"@( 'ASC' | 'DESC' )?"`
}

// withG is WITH cte, ... query. It is an alternative of its own rather than an optional
// prefix, so that a statement that is no query is not reported as a broken one.
type withG struct {
	CTEs  []*cteG     `parser:"'WITH' @@ ( ',' @@ )*"`
	Query *queryExprG `parser:"@@"`
}

// cteG is one common table expression of WITH: name [(columns)] AS (query).
type cteG struct {
	Pos        Pos
	Name       identG      `parser:"@@"`
	Columns    []identG    `parser:"( '(' @@ ( ',' @@ )*"`
	ColumnsEnd *listEnd    `parser:"  @@ )?"`
	Query      *queryExprG `parser:"'AS' '(' @@ ')'"`
}

func (g *queryExprG) toAST() (*Query, error) {
	if g.Body != nil {
		return g.Body.toAST()
	}
	q, err := g.With.Query.toAST()
	if err != nil {
		return nil, err
	}
	if len(q.With) > 0 { // WITH a AS (...) (WITH b AS (...) SELECT ...): one list
		return nil, errorAt(g.With.CTEs[0].Pos, "a query can have only one WITH")
	}
	for _, c := range g.With.CTEs {
		cq, err := c.Query.toAST()
		if err != nil {
			return nil, err
		}
		q.With = append(q.With, &CTE{Pos: c.Pos, Name: c.Name.Name, Columns: names(c.Columns), Query: cq})
	}
	return q, nil
}

// setPrec is how tightly a set operation binds: INTERSECT before UNION and EXCEPT.
func setPrec(op string) int {
	if op == "INTERSECT" {
		return 2
	}
	return 1
}

func (g *bodyG) toAST() (*Query, error) {
	first, err := g.First.toAST()
	if err != nil {
		return nil, err
	}
	terms := []*Query{first}
	for _, op := range g.Ops {
		t, err := op.Right.toAST()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	// Precedence climbing over the operators, which associate to the left.
	i := 0
	var climb func(min int) *Query
	climb = func(min int) *Query {
		left := terms[i]
		for i < len(g.Ops) && setPrec(strings.ToUpper(g.Ops[i].Op)) >= min {
			op := g.Ops[i]
			name := strings.ToUpper(op.Op)
			i++
			right := climb(setPrec(name) + 1)
			left = &Query{Pos: left.Pos, Set: &SetOp{Pos: op.Pos, Op: name, All: op.All, Left: left, Right: right}}
		}
		return left
	}
	q := climb(1)
	if g.OrderBy == nil && g.Limit == nil {
		return q, nil
	}
	if q.OrderBy != nil || q.Limit != nil || len(q.With) > 0 {
		// (SELECT ... LIMIT 1) ORDER BY a: the inner query is a subquery of the outer.
		q = &Query{Pos: q.Pos, Items: []*SelectItem{{Pos: q.Pos, Star: true}}, From: &SubqueryTable{Pos: q.Pos, Query: q}}
	}
	for _, o := range g.OrderBy {
		q.OrderBy = append(q.OrderBy, OrderItem{Expr: o.Expr, Desc: strings.EqualFold(o.Dir, "DESC")})
	}
	q.Limit = g.Limit
	return q, nil
}

func (g *termG) toAST() (*Query, error) {
	switch {
	case g.Paren != nil:
		return g.Paren.toAST()
	case g.Values != nil:
		q := &Query{Pos: g.Values.Pos}
		for _, r := range g.Values.Rows {
			if f, ok := r.(*FuncCall); ok && f.Name == "ROW" && !f.Star && !f.Distinct {
				q.Values = append(q.Values, f.Args)
			} else {
				q.Values = append(q.Values, []Expr{r})
			}
		}
		return q, nil
	}
	return g.Select.toAST()
}

type selectG struct {
	Pos      Pos
	Hints    *hintsG        `parser:"'SELECT' @@?"`
	Distinct bool           `parser:"( @'DISTINCT' | 'ALL' )?"`
	Items    []*selectItemG `parser:"@@ ( ',' @@ )*"`
	From     *fromG         `parser:"( 'FROM' @@ )?"`
	Where    Expr           `parser:"( 'WHERE' @@ )?"`
	GroupBy  []*groupItemG  `parser:"( 'GROUP' 'BY' @@ ( ',' @@ )* )?"`
	Having   Expr           `parser:"( 'HAVING' @@ )?"`
	Windows  *windowClauseG `parser:"@@?"`
}

func (g *selectG) toAST() (*Query, error) {
	hints, err := hintList(g.Hints)
	if err != nil {
		return nil, err
	}
	q := &Query{Pos: g.Pos, Hints: hints, Distinct: g.Distinct, Where: g.Where, GroupBy: groupExprs(g.GroupBy),
		Having: g.Having}
	if g.Windows != nil {
		q.Windows = g.Windows.Defs
	}
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

// fromG is what FROM reads: a table reference and the joins that follow it.
type fromG struct {
	First       *tableRefG      `parser:"@@"`
	Joins       []*joinItemG    `parser:"@@*"`
	Unsupported unsupportedJoin `parser:"@@?"`
}

// joinItemG is a JOIN or, with a comma, another table (a comma join, whose condition is
// in WHERE).
type joinItemG struct {
	Comma *tableRefG `parser:"  ',' @@"`
	Join  *joinG     `parser:"| @@"`
}

// joinG is `CROSS JOIN table` or `[INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER]]
// JOIN table ON condition`. The words before JOIN are reserved, so they cannot be read as
// the previous table's alias.
type joinG struct {
	Cross *tableRefG `parser:"  'CROSS' 'JOIN' @@"`
	Kind  string     `parser:"| ( @'INNER' | @( 'LEFT' | 'RIGHT' | 'FULL' ) 'OUTER'? )? 'JOIN'"`
	Right *tableRefG `parser:"  @@"`
	On    Expr       `parser:"  'ON' @@"`
}

// unsupportedJoin matches nothing: it fails with a clear message at a NATURAL JOIN, which would otherwise be reported as an unexpected token where ';' was
// expected. It consumes the token it reports, or participle would take the error for no
// match.
type unsupportedJoin struct{}

// Parse implements participle.Parseable.
func (*unsupportedJoin) Parse(lex *lexer.PeekingLexer) error {
	switch t := lex.Peek(); {
	case isKeyword(t, "NATURAL"):
		lex.Next()
		return errorAt(t.Pos, strings.ToUpper(t.Value)+" JOIN is not supported, use JOIN ... ON")
	}
	return participle.NextMatch
}

func (g *fromG) toAST() (TableExpr, error) {
	from, err := g.First.toAST()
	if err != nil {
		return nil, err
	}
	for _, item := range g.Joins {
		if item.Comma != nil {
			right, err := item.Comma.toAST()
			if err != nil {
				return nil, err
			}
			from = &JoinTable{Pos: from.Position(), Kind: "INNER", Comma: true, Left: from, Right: right}
			continue
		}
		j := item.Join
		if j.Cross != nil {
			right, err := j.Cross.toAST()
			if err != nil {
				return nil, err
			}
			on := &BoolLit{Pos: right.Position(), Value: true}
			from = &JoinTable{Pos: from.Position(), Kind: "INNER", Cross: true, Left: from, Right: right, On: on}
			continue
		}
		right, err := j.Right.toAST()
		if err != nil {
			return nil, err
		}
		kind := strings.ToUpper(j.Kind)
		if kind == "" {
			kind = "INNER"
		}
		from = &JoinTable{Pos: from.Position(), Kind: kind, Left: from, Right: right, On: j.On}
	}
	return from, nil
}

// tableRefG is one table in FROM: a window table function, a table or a parenthesised
// query, with an optional alias.
type tableRefG struct {
	Pos    Pos
	Unnest *unnestG         `parser:"( @@"`
	Window *windowTableG    `parser:"| @@"`
	Sub    *queryExprG      `parser:"| '(' @@ ')'"`
	Name   *identG          `parser:"| @@ )"`
	Hints  *hintsG          `parser:"@@?"`
	AsOf   Expr             `parser:"( 'FOR' 'SYSTEM_TIME' 'AS' 'OF' @@ )?"`
	Match  *matchRecognizeG `parser:"@@?"`
	Alias  *tableAliasG     `parser:"( 'AS'? @@"`
	Cols   []identG         `parser:"  ( '(' @@ ( ',' @@ )*"`
	End    *listEnd         `parser:"    @@ )? )?"`
}

// tableAliasG is a table's alias: an identifier, but not the WINDOW that starts a
// SELECT's WINDOW clause (WINDOW name AS), so that WINDOW needs not be reserved.
type tableAliasG struct {
	identG
}

// Parse implements participle.Parseable.
func (g *tableAliasG) Parse(lex *lexer.PeekingLexer) error {
	if windowClauseAhead(lex) {
		return participle.NextMatch
	}
	return g.identG.Parse(lex)
}

// windowClauseAhead reports whether the next tokens are WINDOW name AS.
func windowClauseAhead(lex *lexer.PeekingLexer) bool {
	cp := lex.MakeCheckpoint()
	defer lex.LoadCheckpoint(cp)
	return isWord(lex.Next(), "WINDOW") && isName(lex.Next()) && isKeyword(lex.Next(), "AS")
}

// windowClauseG is a SELECT's WINDOW name AS (spec), ...: its named windows.
type windowClauseG struct {
	Defs []*WindowDef
}

// Parse implements participle.Parseable.
func (g *windowClauseG) Parse(lex *lexer.PeekingLexer) error {
	if !windowClauseAhead(lex) {
		return participle.NextMatch
	}
	lex.Next() // WINDOW
	p := &exprParser{lex: lex}
	for {
		t := lex.Next()
		if !isName(t) {
			return unexpected(t, "window name")
		}
		def := &WindowDef{Pos: t.Pos, Name: identText(t)}
		if err := p.expect("AS"); err != nil {
			return err
		}
		if err := p.expect("("); err != nil {
			return err
		}
		spec, err := p.windowSpec()
		if err != nil {
			return err
		}
		def.Spec = spec
		g.Defs = append(g.Defs, def)
		if !isPunct(lex.Peek(), ",") {
			return nil
		}
		lex.Next()
	}
}

// unnestG is UNNEST(expr) [WITH ORDINALITY]: the elements of an ARRAY or MAP, as a table.
type unnestG struct {
	Pos        Pos
	Expr       Expr
	Ordinality bool
}

// Parse implements participle.Parseable.
func (g *unnestG) Parse(lex *lexer.PeekingLexer) error {
	cp := lex.MakeCheckpoint()
	start := lex.Peek()
	if !isWord(lex.Next(), "UNNEST") || !isPunct(lex.Next(), "(") {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	g.Pos = start.Pos
	p := &exprParser{lex: lex}
	if !p.startsExpr() {
		return unexpected(lex.Peek(), "expression")
	}
	e, err := p.expr(precOr)
	if err != nil {
		return err
	}
	g.Expr = e
	if err := p.expect(")"); err != nil {
		return err
	}
	if isWord(lex.Peek(), "WITH") {
		lex.Next()
		if t := lex.Next(); !isWord(t, "ORDINALITY") {
			return unexpected(t, "ORDINALITY")
		}
		g.Ordinality = true
	}
	return nil
}

// windowTableG is TABLE(fn(data, DESCRIPTOR(col), arg, ...)): a window table-valued
// function. The data is TABLE name or a parenthesised query, with SESSION's PARTITION BY;
// the arguments are positional, or all named (DATA => ..., TIMECOL => ..., SIZE => ...).
type windowTableG struct {
	Pos         Pos
	Fn          string
	Table       string
	Query       *queryExprG
	PartitionBy []string
	TimeCol     string
	Args        []Expr
	ArgNames    []string
}

// Parse implements participle.Parseable.
func (g *windowTableG) Parse(lex *lexer.PeekingLexer) error {
	cp := lex.MakeCheckpoint()
	start := lex.Peek()
	if !isWord(lex.Next(), "TABLE") || !isPunct(lex.Next(), "(") {
		lex.LoadCheckpoint(cp)
		return participle.NextMatch
	}
	g.Pos = start.Pos
	expect := func(want func(*lexer.Token) bool, expected ...string) (*lexer.Token, error) {
		t := lex.Next()
		if !want(t) {
			return nil, unexpected(t, expected...)
		}
		return t, nil
	}
	word := func(w string) func(*lexer.Token) bool {
		return func(t *lexer.Token) bool { return isWord(t, w) || isKeyword(t, w) }
	}
	punct := func(p string) func(*lexer.Token) bool { return func(t *lexer.Token) bool { return isPunct(t, p) } }
	fn, err := expect(isName, "TUMBLE, HOP, CUMULATE or SESSION")
	if err != nil {
		return err
	}
	g.Fn = strings.ToUpper(identText(fn))
	if _, err := expect(punct("("), "'('"); err != nil {
		return err
	}
	var haveData, haveTime bool
	for i := 0; ; i++ {
		if i > 0 {
			if t := lex.Next(); isPunct(t, ")") {
				break
			} else if !isPunct(t, ",") {
				return unexpected(t, "','", "')'")
			}
		}
		at := lex.Peek()
		name := argName(lex)
		switch {
		case i == 0 && name != "":
			g.ArgNames = []string{}
		case i > 0 && (name != "") != (g.ArgNames != nil):
			return errorAt(at.Pos, "window function arguments are either all named (SIZE => ...) or all positional")
		}
		what := name
		if name == "" {
			what = map[int]string{0: "DATA", 1: "TIMECOL"}[i]
		}
		switch what {
		case "DATA":
			if haveData {
				return errorAt(at.Pos, "DATA is given twice")
			}
			haveData = true
			if err := g.parseData(lex); err != nil {
				return err
			}
		case "TIMECOL":
			if haveTime {
				return errorAt(at.Pos, "TIMECOL is given twice")
			}
			haveTime = true
			if _, err := expect(word("DESCRIPTOR"), "DESCRIPTOR"); err != nil {
				return err
			}
			if _, err := expect(punct("("), "'('"); err != nil {
				return err
			}
			col, err := expect(isName, "time column")
			if err != nil {
				return err
			}
			g.TimeCol = identText(col)
			if _, err := expect(punct(")"), "')'"); err != nil {
				return err
			}
		default:
			e, err := parseExpr(lex)
			if err == participle.NextMatch {
				return unexpected(lex.Peek(), "expression")
			}
			if err != nil {
				return err
			}
			g.Args = append(g.Args, e)
			if name != "" {
				g.ArgNames = append(g.ArgNames, name)
			}
		}
	}
	switch {
	case !haveData:
		return errorAt(start.Pos, "window "+g.Fn+" needs its DATA => TABLE argument")
	case !haveTime:
		return errorAt(start.Pos, "window "+g.Fn+" needs its TIMECOL => DESCRIPTOR(col) argument")
	}
	_, err = expect(punct(")"), "')'")
	return err
}

// parseData reads a window function's table: TABLE name or (query), then SESSION's
// optional PARTITION BY columns.
func (g *windowTableG) parseData(lex *lexer.PeekingLexer) error {
	switch t := lex.Next(); {
	case isWord(t, "TABLE"):
		name := lex.Next()
		if !isName(name) {
			return unexpected(name, "table name")
		}
		g.Table = identText(name)
	case isPunct(t, "("):
		q, err := queryParser.ParseFromLexer(lex, participle.AllowTrailing(true))
		if err != nil {
			return err
		}
		if t := lex.Next(); !isPunct(t, ")") {
			return unexpected(t, "')'")
		}
		g.Query = q
	default:
		return unexpected(t, "TABLE", "'('")
	}
	if !isWord(lex.Peek(), "PARTITION") {
		return nil
	}
	lex.Next()
	if t := lex.Next(); !isWord(t, "BY") {
		return unexpected(t, "BY")
	}
	for {
		col := lex.Next()
		if !isName(col) {
			return unexpected(col, "partition column")
		}
		g.PartitionBy = append(g.PartitionBy, identText(col))
		cp := lex.MakeCheckpoint()
		if !isPunct(lex.Next(), ",") || isWord(lex.Peek(), "DESCRIPTOR") || argName(lex) != "" {
			lex.LoadCheckpoint(cp) // the comma before the next argument
			return nil
		}
	}
}

// argName consumes `name =>` and returns the name, upper case, if they come next.
func argName(lex *lexer.PeekingLexer) string {
	cp := lex.MakeCheckpoint()
	if t := lex.Next(); isName(t) && isPunct(lex.Next(), "=") && isPunct(lex.Next(), ">") {
		return strings.ToUpper(identText(t))
	}
	lex.LoadCheckpoint(cp)
	return ""
}

func (g *tableRefG) toAST() (TableExpr, error) {
	if g.Hints != nil && g.Name == nil && len(g.Hints.Hints) > 0 {
		return nil, errorAt(g.Hints.Hints[0].Pos, "a table hint follows a table's name, not a subquery or table function")
	}
	if g.AsOf != nil && g.Name == nil {
		return nil, errorAt(g.AsOf.Position(), "FOR SYSTEM_TIME AS OF follows a table's name, not a subquery or table function")
	}
	var alias string
	if g.Alias != nil {
		alias = g.Alias.Name
	}
	if g.Match != nil {
		return g.matchRecognize(alias)
	}
	if u := g.Unnest; u != nil {
		return &UnnestTable{Pos: u.Pos, Expr: u.Expr, Ordinality: u.Ordinality, Alias: alias, Columns: names(g.Cols)}, nil
	}
	if w := g.Window; w != nil {
		t := &WindowTable{Pos: w.Pos, Fn: w.Fn, Table: w.Table, PartitionBy: w.PartitionBy, TimeCol: w.TimeCol, Args: w.Args, ArgNames: w.ArgNames, Alias: alias}
		if w.Query != nil {
			q, err := w.Query.toAST()
			if err != nil {
				return nil, err
			}
			t.Query = q
		}
		return t, nil
	}
	if g.Sub != nil {
		q, err := g.Sub.toAST()
		if err != nil {
			return nil, err
		}
		return &SubqueryTable{Pos: g.Pos, Query: q, Alias: alias, Columns: names(g.Cols)}, nil
	}
	if g.Cols != nil {
		return nil, errorAt(g.Alias.Pos, "a column list after an alias renames the columns of a subquery or VALUES only")
	}
	hints, err := hintList(g.Hints)
	if err != nil {
		return nil, err
	}
	return &TableName{Pos: g.Pos, Name: g.Name.Name, Alias: alias, Hints: hints, AsOf: g.AsOf}, nil
}

// matchRecognize makes the table before MATCH_RECOGNIZE its input; the alias names the
// match's rows.
func (g *tableRefG) matchRecognize(alias string) (TableExpr, error) {
	m := g.Match.M
	if g.Unnest != nil || g.Window != nil || g.AsOf != nil {
		return nil, errorAt(m.Pos, "MATCH_RECOGNIZE follows a table's name or a parenthesised query")
	}
	if g.Cols != nil {
		return nil, errorAt(g.Alias.Pos, "a column list after an alias renames the columns of a subquery or VALUES only")
	}
	inner := *g
	inner.Match, inner.Alias, inner.Cols, inner.End = nil, nil, nil, nil
	in, err := inner.toAST()
	if err != nil {
		return nil, err
	}
	m.Input, m.Alias = in, alias
	return m, nil
}
