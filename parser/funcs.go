package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// niladic are the functions called without parentheses (CURRENT_TIMESTAMP); `()` is
// accepted after them too. They are reserved words.
var niladic = map[string]bool{
	"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
	"LOCALTIMESTAMP": true, "LOCALTIME": true,
}

// keywordFuncs are reserved words that are also functions when followed by '('.
var keywordFuncs = map[string]bool{"LEFT": true, "RIGHT": true}

// rankingFuncs are the functions read as OverExpr: name() OVER (...). Written `quoted`, the
// name is an ordinary function.
var rankingFuncs = map[string]bool{"ROW_NUMBER": true, "RANK": true, "DENSE_RANK": true}

// extractUnits are the units EXTRACT accepts.
var extractUnits = []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "DOY", "DOW", "HOUR",
	"MINUTE", "SECOND", "MILLISECOND", "EPOCH"}

// niladicCall parses CURRENT_TIMESTAMP or CURRENT_TIMESTAMP().
func (p *exprParser) niladicCall() (Expr, error) {
	t := p.next()
	f := &FuncCall{Pos: t.Pos, Name: strings.ToUpper(t.Value)}
	if isPunct(p.peek(), "(") {
		p.next()
		return f, p.expect(")")
	}
	return f, nil
}

// call parses name(...) at the current token: ranking functions with their OVER window, the
// special syntaxes of CAST, TRY_CAST, EXTRACT, SUBSTRING, POSITION and TRIM, and generic
// calls. A `quoted` name is always a generic call.
func (p *exprParser) call() (Expr, error) {
	saved := p.noIn
	p.noIn = false
	defer func() { p.noIn = saved }()

	t := p.next()
	p.next() // (
	f := &FuncCall{Pos: t.Pos, Name: strings.ToUpper(identText(t))}
	var (
		e   Expr
		err error
	)
	switch {
	case t.Type == tokQuotedIdent:
		e, err = p.args(f)
	case rankingFuncs[f.Name]:
		return p.ranking(f)
	case f.Name == "CAST" || f.Name == "TRY_CAST":
		e, err = p.cast(t, f.Name == "TRY_CAST")
	case f.Name == "EXTRACT":
		e, err = p.extract(t)
	case nullTreatments[f.Name] != nil && !isPunct(p.peek(), ")") && !isPunct(p.peek(), "*"):
		e, err = p.aggArgs(f)
	case p.genericArgsAhead():
		e, err = p.args(f) // SUBSTRING(), TRIM(*), ...: only the generic syntax fits
	case f.Name == "JSON_QUERY":
		e, err = p.jsonQuery(f)
	case f.Name == "JSON_VALUE":
		e, err = p.jsonValue(f)
	case f.Name == "JSON_EXISTS":
		e, err = p.jsonExists(f)
	case f.Name == "SUBSTRING":
		e, err = p.substring(f)
	case f.Name == "OVERLAY":
		e, err = p.overlay(f)
	case f.Name == "FLOOR" || f.Name == "CEIL" || f.Name == "CEILING":
		e, err = p.floorCeil(f)
	case f.Name == "POSITION":
		e, err = p.position(f)
	case f.Name == "TRIM":
		e, err = p.trim(f)
	default:
		e, err = p.args(f)
	}
	if err == nil {
		e, err = p.filter(e)
	}
	if t := p.peek(); err == nil && isKeyword(t, "OVER") {
		call, ok := e.(*FuncCall)
		if !ok {
			return nil, errorAt(t.Pos, "OVER follows only an aggregate function call")
		}
		return p.over(&OverExpr{Pos: call.Pos, Fn: call.Name, Call: call})
	}
	return e, err
}

// nullTreatments are the aggregates that take a NULL treatment before their closing
// parenthesis, and the ones each takes.
var nullTreatments = map[string][]string{
	"ARRAY_AGG":      {"RESPECT NULLS", "IGNORE NULLS"},
	"JSON_ARRAYAGG":  {"NULL ON NULL", "ABSENT ON NULL"},
	"JSON_OBJECTAGG": {"NULL ON NULL", "ABSENT ON NULL"},
	"JSON_ARRAY":     {"NULL ON NULL", "ABSENT ON NULL"},
	"JSON_OBJECT":    {"NULL ON NULL", "ABSENT ON NULL"},
}

// jsonObjects are the functions whose arguments are [KEY] k VALUE v pairs: JSON_OBJECTAGG
// takes one, JSON_OBJECT any number.
var jsonObjects = map[string]bool{"JSON_OBJECTAGG": true, "JSON_OBJECT": true}

// aggArgs parses the arguments of ARRAY_AGG([DISTINCT] x [RESPECT|IGNORE NULLS]),
// JSON_ARRAYAGG(x [NULL|ABSENT ON NULL]), JSON_OBJECTAGG([KEY] k VALUE v [NULL|ABSENT ON
// NULL]), JSON_ARRAY([x, ...] [NULL|ABSENT ON NULL]) and JSON_OBJECT([[KEY] k VALUE v,
// ...] [NULL|ABSENT ON NULL]) after '('.
func (p *exprParser) aggArgs(f *FuncCall) (Expr, error) {
	if isKeyword(p.peek(), "DISTINCT") {
		p.next()
		f.Distinct = true
	}
	treatments := nullTreatments[f.Name]
	object := jsonObjects[f.Name]
	constructor := f.Name == "JSON_ARRAY" || f.Name == "JSON_OBJECT"
	for !constructor || p.treatmentAhead(treatments) == "" {
		if object && isWord(p.peek(), "KEY") && !isWord(p.peekAt(1), "VALUE") && !p.operatorAt(1) {
			p.next() // KEY, the keyword
		}
		x, err := p.inner()
		if err != nil {
			return nil, err
		}
		f.Args = append(f.Args, x)
		if object {
			if err := p.expect("VALUE"); err != nil {
				return nil, err
			}
			v, err := p.inner()
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, v)
		}
		if (!object || constructor) && isPunct(p.peek(), ",") {
			p.next()
			continue
		}
		break
	}
	if tr := p.treatmentAhead(treatments); tr != "" {
		for range strings.Fields(tr) {
			p.next()
		}
		f.OnNull = tr
	}
	alts := []string{"')'"}
	if f.OnNull == "" {
		alts = append(alts, treatments...)
	}
	return f, p.expect(")", alts...)
}

// treatmentAhead returns the one of treatments the next tokens spell, or "".
func (p *exprParser) treatmentAhead(treatments []string) string {
	for _, tr := range treatments {
		if p.wordsAhead(strings.Fields(tr)) {
			return tr
		}
	}
	return ""
}

// wordsAhead reports whether the next tokens are the keywords or words ws.
func (p *exprParser) wordsAhead(ws []string) bool {
	for i, w := range ws {
		t := p.peekAt(i)
		if !isKeyword(t, w) && !isWord(t, w) {
			return false
		}
	}
	return true
}

// operatorAt reports whether the token n places ahead is punctuation other than '(',
// which cannot start an expression.
func (p *exprParser) operatorAt(n int) bool {
	t := p.peekAt(n)
	return t.Type == tokPunct && t.Value != "(" && t.Value != "-" && t.Value != "+"
}

// filter parses an aggregate's `FILTER (WHERE cond)` after a call e, if one follows. FILTER
// is not reserved: it starts the clause only when `( WHERE` follows it, so a column
// aliased filter still works.
func (p *exprParser) filter(e Expr) (Expr, error) {
	if t := p.peek(); !(isWord(t, "FILTER") || isKeyword(t, "FILTER")) || !isPunct(p.peekAt(1), "(") || !isKeyword(p.peekAt(2), "WHERE") {
		return e, nil
	}
	f, ok := e.(*FuncCall)
	if !ok {
		return nil, errorAt(p.peek().Pos, "FILTER (WHERE ...) follows only an aggregate function call")
	}
	p.next()
	p.next()
	p.next()
	cond, err := p.inner()
	if err != nil {
		return nil, err
	}
	f.Filter = cond
	return f, p.expect(")")
}

// ranking parses the rest of a ranking function after its '(': `) OVER window`.
func (p *exprParser) ranking(f *FuncCall) (Expr, error) {
	o := &OverExpr{Pos: f.Pos, Fn: f.Name}
	if t := p.peek(); !isPunct(t, ")") && !t.EOF() {
		return nil, errorAt(t.Pos, o.Fn+" takes no arguments")
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return p.over(o)
}

// over parses `OVER name` or `OVER (spec)` into o, at OVER.
func (p *exprParser) over(o *OverExpr) (Expr, error) {
	if err := p.expect("OVER"); err != nil {
		return nil, err
	}
	if t := p.peek(); isName(t) {
		p.next()
		o.Name = identText(t)
		return o, nil
	}
	if err := p.expect("(", "'('", "window name"); err != nil {
		return nil, err
	}
	spec, err := p.windowSpec()
	if err != nil {
		return nil, err
	}
	o.WindowSpec = spec
	return o, nil
}

// windowSpec parses a window after its '(', through its ')':
// `[PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...] [ROWS|RANGE frame])`.
func (p *exprParser) windowSpec() (WindowSpec, error) {
	var w WindowSpec
	end := []string{"PARTITION BY", "ORDER BY", "ROWS", "RANGE", "')'"}
	if isWord(p.peek(), "PARTITION") {
		p.next()
		if err := p.expect("BY"); err != nil {
			return w, err
		}
		for {
			e, err := p.inner()
			if err != nil {
				return w, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
			if !isPunct(p.peek(), ",") {
				break
			}
			p.next()
		}
		end = []string{"','", "ORDER BY", "ROWS", "RANGE", "')'"}
	}
	if isKeyword(p.peek(), "ORDER") {
		p.next()
		if err := p.expect("BY"); err != nil {
			return w, err
		}
		for {
			e, err := p.inner()
			if err != nil {
				return w, err
			}
			item := OrderItem{Expr: e}
			end = []string{"ASC", "DESC", "','", "ROWS", "RANGE", "')'"}
			switch t := p.peek(); {
			case isWord(t, "ASC"):
				p.next()
				end = []string{"','", "ROWS", "RANGE", "')'"}
			case isWord(t, "DESC"):
				p.next()
				item.Desc = true
				end = []string{"','", "ROWS", "RANGE", "')'"}
			}
			w.OrderBy = append(w.OrderBy, item)
			if !isPunct(p.peek(), ",") {
				break
			}
			p.next()
		}
	}
	if t := p.peek(); isWord(t, "ROWS") || isWord(t, "RANGE") {
		p.next()
		f := &Frame{Pos: t.Pos, Range: isWord(t, "RANGE")}
		var err error
		if isKeyword(p.peek(), "BETWEEN") {
			p.next()
			f.Between = true
			if f.Start, err = p.frameBound(); err != nil {
				return w, err
			}
			if err := p.expect("AND"); err != nil {
				return w, err
			}
			if f.End, err = p.frameBound(); err != nil {
				return w, err
			}
		} else {
			if f.Start, err = p.frameBound(); err != nil {
				return w, err
			}
			f.End = FrameBound{Pos: f.Start.Pos, Current: true}
		}
		w.Frame = f
		end = []string{"')'"}
	}
	return w, p.expect(")", end...)
}

// frameBound parses one end of a frame: UNBOUNDED PRECEDING|FOLLOWING, CURRENT ROW, or
// offset PRECEDING|FOLLOWING.
func (p *exprParser) frameBound() (FrameBound, error) {
	t := p.peek()
	b := FrameBound{Pos: t.Pos}
	switch {
	case isWord(t, "UNBOUNDED"):
		p.next()
		b.Unbounded = true
	case isWord(t, "CURRENT") && isWord(p.peekAt(1), "ROW"):
		p.next()
		p.next()
		b.Current = true
		return b, nil
	case p.startsExpr():
		x, err := p.inner()
		if err != nil {
			return b, err
		}
		b.Offset = x
	default:
		return b, unexpected(t, "UNBOUNDED", "CURRENT ROW", "offset")
	}
	switch t := p.peek(); {
	case isWord(t, "PRECEDING"):
	case isWord(t, "FOLLOWING"):
		b.Following = true
	default:
		return b, unexpectedOrNearMiss(t, []string{"PRECEDING", "FOLLOWING"})
	}
	p.next()
	return b, nil
}

// genericArgsAhead reports whether the argument list starts with ')', '*' or DISTINCT, which
// only the generic syntax accepts.
func (p *exprParser) genericArgsAhead() bool {
	t := p.peek()
	return isPunct(t, ")") || isPunct(t, "*") || isKeyword(t, "DISTINCT")
}

// args parses the arguments of a generic call after '(': `)`, `*)` or
// `[DISTINCT] e, ...)`.
func (p *exprParser) args(f *FuncCall) (Expr, error) {
	switch t := p.peek(); {
	case isPunct(t, ")"):
		p.next()
		return f, nil
	case isPunct(t, "*"):
		p.next()
		f.Star = true
		return f, p.expect(")")
	case isKeyword(t, "DISTINCT"):
		p.next()
		f.Distinct = true
	}
	list, err := p.list()
	if err != nil {
		return nil, err
	}
	f.Args = list
	return f, nil
}

// moreArgs finishes a generic call whose first argument has been parsed.
func (p *exprParser) moreArgs(f *FuncCall, first Expr, alts ...string) (Expr, error) {
	f.Args = []Expr{first}
	switch t := p.next(); {
	case isPunct(t, ")"):
		return f, nil
	case isPunct(t, ","):
		rest, err := p.list()
		if err != nil {
			return nil, err
		}
		f.Args = append(f.Args, rest...)
		return f, nil
	default:
		return nil, unexpectedOrNearMiss(t, append(alts, "')'", "','"))
	}
}

// cast parses the rest of CAST(x AS type) or TRY_CAST(x AS type).
func (p *exprParser) cast(name *lexer.Token, try bool) (Expr, error) {
	x, err := p.inner()
	if err != nil {
		return nil, err
	}
	if err := p.expect("AS"); err != nil {
		return nil, err
	}
	typ, err := parseType(p.lex)
	if err != nil {
		return nil, err
	}
	if typ == nil {
		return nil, unexpected(p.peek(), "type")
	}
	return &CastExpr{Pos: name.Pos, X: x, Type: typ, Try: try}, p.expect(")")
}

// extract parses the rest of EXTRACT(unit FROM x).
func (p *exprParser) extract(name *lexer.Token) (Expr, error) {
	t := p.peek()
	unit := ""
	for _, u := range extractUnits {
		if isWord(t, u) {
			unit = u
		}
	}
	if unit == "" {
		return nil, unexpectedOrNearMiss(t, []string{"time unit (" + oneOf(extractUnits) + ")"})
	}
	p.next()
	if err := p.expect("FROM"); err != nil {
		return nil, err
	}
	x, err := p.inner()
	if err != nil {
		return nil, err
	}
	return &ExtractExpr{Pos: name.Pos, Unit: unit, X: x}, p.expect(")")
}

// floorTimeUnits are the units FLOOR(x TO unit) and CEIL(x TO unit) take.
var floorTimeUnits = []string{"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "QUARTER", "YEAR"}

// floorCeil parses the rest of FLOOR(x TO unit), CEIL(x TO unit) or FLOOR(x, ...).
func (p *exprParser) floorCeil(f *FuncCall) (Expr, error) {
	x, err := p.inner()
	if err != nil {
		return nil, err
	}
	if !isWord(p.peek(), "TO") {
		return p.moreArgs(f, x, "TO")
	}
	p.next()
	t := p.peek()
	for _, u := range floorTimeUnits {
		if isWord(t, u) {
			p.next()
			f.Args, f.TimeUnit = []Expr{x}, u
			return f, p.expect(")")
		}
	}
	return nil, unexpectedOrNearMiss(t, []string{"time unit (" + oneOf(floorTimeUnits) + ")"})
}

// substring parses the rest of SUBSTRING(s FROM start [FOR length]) or SUBSTRING(s, ...).
func (p *exprParser) substring(f *FuncCall) (Expr, error) {
	s, err := p.inner()
	if err != nil {
		return nil, err
	}
	if !isKeyword(p.peek(), "FROM") {
		return p.moreArgs(f, s, "FROM")
	}
	p.next()
	start, err := p.inner()
	if err != nil {
		return nil, err
	}
	f.Args = []Expr{s, start}
	if isKeyword(p.peek(), "FOR") {
		p.next()
		length, err := p.inner()
		if err != nil {
			return nil, err
		}
		f.Args = append(f.Args, length)
		return f, p.expect(")")
	}
	return f, p.expect(")", "FOR", "')'")
}

// position parses the rest of POSITION(a IN b), or POSITION(a, ...).
func (p *exprParser) position(f *FuncCall) (Expr, error) {
	p.noIn = true
	a, err := p.expr(precOr)
	p.noIn = false
	if err != nil {
		return nil, err
	}
	if !isKeyword(p.peek(), "IN") {
		return p.moreArgs(f, a, "IN")
	}
	p.next()
	b, err := p.inner()
	if err != nil {
		return nil, err
	}
	f.Args = []Expr{a, b}
	return f, p.expect(")")
}

// overlay parses the rest of OVERLAY(s PLACING r FROM start [FOR length]) into
// OVERLAY(s, r, start[, length]), or OVERLAY(s, ...).
func (p *exprParser) overlay(f *FuncCall) (Expr, error) {
	s, err := p.inner()
	if err != nil {
		return nil, err
	}
	if !isWord(p.peek(), "PLACING") {
		return p.moreArgs(f, s, "PLACING")
	}
	p.next()
	r, err := p.inner()
	if err != nil {
		return nil, err
	}
	if err := p.expect("FROM"); err != nil {
		return nil, err
	}
	start, err := p.inner()
	if err != nil {
		return nil, err
	}
	f.Args = []Expr{s, r, start}
	if isKeyword(p.peek(), "FOR") {
		p.next()
		n, err := p.inner()
		if err != nil {
			return nil, err
		}
		f.Args = append(f.Args, n)
	}
	return f, p.expect(")")
}

// trimSides maps the side of TRIM(side [chars] FROM s) to the function it becomes.
var trimSides = map[string]string{"BOTH": "TRIM", "LEADING": "LTRIM", "TRAILING": "RTRIM"}

// trim parses the rest of TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) into
// TRIM|LTRIM|RTRIM(s[, chars]), or TRIM(s, ...). BOTH, LEADING and TRAILING are not
// reserved: they are read as the side only when a FROM follows in the same parentheses.
func (p *exprParser) trim(f *FuncCall) (Expr, error) {
	var (
		chars Expr
		err   error
	)
	t := p.peek()
	side, isSide := trimSides[strings.ToUpper(t.Value)]
	switch {
	case t.Type == tokIdent && isSide && p.fromAhead():
		p.next()
		f.Name = side
		if !isKeyword(p.peek(), "FROM") {
			if chars, err = p.inner(); err != nil {
				return nil, err
			}
		}
	case isKeyword(t, "FROM"):
	default:
		if chars, err = p.inner(); err != nil {
			return nil, err
		}
		if !isKeyword(p.peek(), "FROM") {
			return p.moreArgs(f, chars, "FROM")
		}
	}
	if err := p.expect("FROM"); err != nil {
		return nil, err
	}
	s, err := p.inner()
	if err != nil {
		return nil, err
	}
	f.Args = []Expr{s}
	if chars != nil {
		f.Args = append(f.Args, chars)
	}
	return f, p.expect(")")
}

// fromAhead reports whether a FROM occurs before the ')' that closes the current parentheses.
func (p *exprParser) fromAhead() bool {
	cp := p.lex.MakeCheckpoint()
	defer p.lex.LoadCheckpoint(cp)
	depth := 0
	for t := p.peek(); !t.EOF(); t = p.peek() {
		switch {
		case isPunct(t, "("):
			depth++
		case isPunct(t, ")"):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && isKeyword(t, "FROM"):
			return true
		}
		p.next()
	}
	return false
}

// jsonQueryClauses are the clauses JSON_QUERY takes after its arguments, in order: a
// wrapper, then what to do ON EMPTY, then ON ERROR. Each alternative is its words.
var jsonQueryClauses = [][]string{
	{"WITHOUT ARRAY WRAPPER", "WITHOUT WRAPPER", "WITH CONDITIONAL ARRAY WRAPPER", "WITH CONDITIONAL WRAPPER",
		"WITH UNCONDITIONAL ARRAY WRAPPER", "WITH UNCONDITIONAL WRAPPER", "WITH ARRAY WRAPPER", "WITH WRAPPER"},
	{"NULL ON EMPTY", "EMPTY ARRAY ON EMPTY", "EMPTY OBJECT ON EMPTY", "ERROR ON EMPTY"},
	{"NULL ON ERROR", "EMPTY ARRAY ON ERROR", "EMPTY OBJECT ON ERROR", "ERROR ON ERROR"},
}

// jsonArgs parses the JSON text and path JSON_VALUE and JSON_QUERY start with.
func (p *exprParser) jsonArgs(f *FuncCall) error {
	for len(f.Args) < 2 {
		if len(f.Args) == 1 {
			if err := p.expect(","); err != nil {
				return err
			}
		}
		x, err := p.inner()
		if err != nil {
			return err
		}
		f.Args = append(f.Args, x)
	}
	return nil
}

// jsonValue parses JSON_VALUE(json, path [RETURNING type] [NULL | ERROR | DEFAULT e ON
// EMPTY] [... ON ERROR]) after '('.
func (p *exprParser) jsonValue(f *FuncCall) (Expr, error) {
	if err := p.jsonArgs(f); err != nil {
		return nil, err
	}
	if isWord(p.peek(), "RETURNING") {
		p.next()
		typ, err := parseType(p.lex)
		if err != nil {
			return nil, err
		}
		if typ == nil {
			return nil, unexpected(p.peek(), "type")
		}
		f.Returning = typ
	}
	for _, on := range []string{"EMPTY", "ERROR"} {
		b := &JSONBehavior{}
		start := p.lex.MakeCheckpoint()
		switch t := p.peek(); {
		case isKeyword(t, "NULL"), isWord(t, "ERROR"):
			b.Kind = strings.ToUpper(p.next().Value)
		case isWord(t, "DEFAULT"):
			p.next()
			x, err := p.inner()
			if err != nil {
				return nil, err
			}
			b.Kind, b.Default = "DEFAULT", x
		default:
			continue
		}
		if !p.wordsAhead([]string{"ON", on}) {
			if on == "EMPTY" && p.wordsAhead([]string{"ON", "ERROR"}) {
				p.lex.LoadCheckpoint(start) // no ON EMPTY clause: this one is ON ERROR's
				continue
			}
			return nil, p.expect("ON")
		}
		p.next()
		p.next()
		if on == "EMPTY" {
			f.OnEmpty = b
		} else {
			f.OnError = b
		}
	}
	return f, p.expect(")", "')'", "ON EMPTY", "ON ERROR")
}

// jsonExistsOnError are the ON ERROR clauses JSON_EXISTS takes after its arguments.
var jsonExistsOnError = []string{"TRUE ON ERROR", "FALSE ON ERROR", "UNKNOWN ON ERROR", "ERROR ON ERROR"}

// jsonExists parses JSON_EXISTS(json, path [TRUE | FALSE | UNKNOWN | ERROR ON ERROR])
// after '('.
func (p *exprParser) jsonExists(f *FuncCall) (Expr, error) {
	if err := p.jsonArgs(f); err != nil {
		return nil, err
	}
	if tr := p.treatmentAhead(jsonExistsOnError); tr != "" {
		for range strings.Fields(tr) {
			p.next()
		}
		f.Clauses = tr
	}
	return f, p.expect(")", "')'", "ON ERROR")
}

// jsonQuery parses JSON_QUERY(json, path [wrapper] [... ON EMPTY] [... ON ERROR]) after
// '('.
func (p *exprParser) jsonQuery(f *FuncCall) (Expr, error) {
	if err := p.jsonArgs(f); err != nil {
		return nil, err
	}
	var clauses, alts []string
	for _, group := range jsonQueryClauses {
		if tr := p.treatmentAhead(group); tr != "" {
			for range strings.Fields(tr) {
				p.next()
			}
			clauses = append(clauses, tr)
			continue
		}
		alts = append(alts, group[0])
	}
	f.Clauses = strings.Join(clauses, " ")
	return f, p.expect(")", append([]string{"')'"}, alts...)...)
}
