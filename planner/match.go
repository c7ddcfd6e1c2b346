package planner

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// MatchRecognize finds row patterns in each partition of its input, as Flink's
// MATCH_RECOGNIZE does: rows are ordered by their time once the watermark passes them
// (rows of equal time by the further ORDER BY keys, then by arrival; a processing-time
// attribute orders them by arrival, a WatermarkAssigner following the clock below), and
// a pattern's variables are assigned to consecutive rows by the DEFINE conditions, one
// output row per match (the PARTITION BY columns, then the MEASURES).
//
// Input is a projection: the input's columns, then the expressions that navigation and
// aggregates read from each row (A.price * A.tax in LAST(A.price * A.tax)). Defines[v]
// and Measures are bound over schemas of navigation values (MatchNav), DefineNavs[v] and
// MeasureNavs: a condition sees the rows its partial match mapped so far and the current
// row as variable v; a measure sees the whole match. The output is insert-only.
type MatchRecognize struct {
	Input       Node
	PartitionBy []int
	TimeCol     int
	OrderBy     []SortKey // the ORDER BY keys after the time: they order rows of equal time
	Vars        []string  // the pattern's variables, in the order written
	Program     []MatchInstr
	Defines     []Expr // per variable; nil: always TRUE
	DefineNavs  [][]MatchNav
	DefineSQL   []string
	Measures    []Expr
	MeasureNavs []MatchNav
	MeasureSQL  []string
	Names       []string // the measures' names
	Skip        MatchSkip
	SkipVar     int   // the variable of SKIP TO FIRST/LAST
	Within      int64 // ms; 0 without WITHIN
	PatternSQL  string
	RowtimeOut  int  // the output column that is MATCH_ROWTIME(), -1 for none
	Proctime    bool // ordered by a processing-time attribute
}

// MatchSkip is where the next match may start after one is found.
type MatchSkip uint8

const (
	SkipPastLastRow MatchSkip = iota
	SkipToNextRow
	SkipToFirst
	SkipToLast
)

// MatchOp is an instruction of a pattern's program.
type MatchOp uint8

const (
	// OpVar maps the current row to Var if its condition holds, and goes on with the
	// next instruction at the next row.
	OpVar MatchOp = iota
	// OpSplit goes on at X and at Y, X first. With Greedy, Y is not taken at a row that X
	// maps to a variable (a greedy quantifier takes the rows its variable accepts, as
	// Flink's does); otherwise both are, X preferred.
	OpSplit
	OpJump  // goes on at X
	OpMatch // the pattern matched
)

// MatchInstr is one instruction of a pattern's program.
type MatchInstr struct {
	Op     MatchOp
	Var    int
	X, Y   int
	Greedy bool
}

// MatchNavKind is how a navigation value picks its rows.
type MatchNavKind uint8

const (
	NavLast  MatchNavKind = iota // the Offset-th last row of Var (0: the last)
	NavFirst                     // the Offset-th row of Var from its first (0: the first)
	NavPrev                      // the row Offset rows before the current one in the match
	NavAgg                       // Agg over the rows of Var
)

// MatchNav is one value the conditions or measures read: Col of the row(s) of variable
// Var (-1: every variable) that Kind picks.
type MatchNav struct {
	Kind   MatchNavKind
	Var    int
	Offset int
	Col    int // a column of the node's Input; -1 for COUNT(*)
	Agg    AggFunc
	T      Type
}

func (n *MatchRecognize) Schema() Schema {
	in := n.Input.Schema()
	var s Schema
	for _, c := range n.PartitionBy {
		s = append(s, in[c])
	}
	for i, m := range n.Measures {
		s = append(s, Column{Name: n.Names[i], Type: m.Type()})
	}
	return s
}

func (n *MatchRecognize) Children() []Node { return []Node{n.Input} }
func (n *MatchRecognize) Updating() bool   { return false }

// SkipSQL is the AFTER MATCH clause.
func (n *MatchRecognize) SkipSQL() string {
	switch n.Skip {
	case SkipToNextRow:
		return "SKIP TO NEXT ROW"
	case SkipToFirst:
		return "SKIP TO FIRST " + n.Vars[n.SkipVar]
	case SkipToLast:
		return "SKIP TO LAST " + n.Vars[n.SkipVar]
	}
	return "SKIP PAST LAST ROW"
}

func (n *MatchRecognize) Describe() string { return n.describe(columnNames(n.Input)) }

func columnNames(in Node) func(int) string {
	s := in.Schema()
	return func(c int) string { return s[c].Name }
}

func (n *MatchRecognize) describe(col func(int) string) string {
	part := make([]string, len(n.PartitionBy))
	for i, c := range n.PartitionBy {
		part[i] = col(c)
	}
	meas := make([]string, len(n.Measures))
	for i := range n.Measures {
		meas[i] = n.MeasureSQL[i] + " AS " + n.Names[i]
	}
	var def []string
	for v, sql := range n.DefineSQL {
		if sql != "" {
			def = append(def, n.Vars[v]+" AS "+sql)
		}
	}
	within := ""
	if n.Within > 0 {
		within = fmt.Sprintf(", within=[%dms]", n.Within)
	}
	order := []string{col(n.TimeCol) + " ASC"}
	for _, k := range n.OrderBy {
		dir := " ASC"
		if k.Desc {
			dir = " DESC"
		}
		order = append(order, col(k.Col)+dir)
	}
	return fmt.Sprintf("Match(partitionBy=[%s], orderBy=[%s], measures=[%s], rowsPerMatch=[ONE ROW PER MATCH], after=[%s], pattern=[%s]%s, define=[%s])",
		strings.Join(part, ", "), strings.Join(order, ", "), strings.Join(meas, ", "), n.SkipSQL(), n.PatternSQL, within, strings.Join(def, ", "))
}

// matchMeaning is what decides the state of a match: all of it but the output names,
// its columns written as the expressions its input computes.
func matchMeaning(n *MatchRecognize) string {
	col := columnSQL(n.Input)
	var derived []string
	for i := range n.Input.Schema() {
		derived = append(derived, col(i))
	}
	return n.describe(col) + " rows=[" + strings.Join(derived, ", ") + "]"
}

// matchRecognize plans FROM input MATCH_RECOGNIZE (...) [AS] alias.
func (p *Planner) matchRecognize(t *parser.MatchRecognize, depth int) (Node, *scope, error) {
	in, inScope, err := p.from(t.Input, depth)
	if err != nil {
		return nil, nil, err
	}
	if in.Updating() {
		return nil, nil, errorf(t, "MATCH_RECOGNIZE doesn't support consuming update and delete changes: its input must be an append-only table")
	}
	if t.Rows == "ALL" {
		return nil, nil, errorf(t, "All rows per match mode is not supported yet.")
	}
	inSchema := in.Schema()
	unq := newScope("", inSchema)
	for i := range unq.cols {
		unq.cols[i].qual = inScope.cols[i].qual
	}
	b := &exprBinder{sc: unq}
	n := &MatchRecognize{RowtimeOut: -1, SkipVar: -1}
	pre := &Project{Input: in, Exprs: columnRefs(inSchema), Names: schemaNames(inSchema)}
	for _, e := range t.PartitionBy {
		x, err := b.bind(e)
		if err != nil {
			return nil, nil, err
		}
		c, ok := x.(*ColumnRef)
		if !ok {
			return nil, nil, errorf(e, "MATCH_RECOGNIZE partitions by columns, and %s is no column", e)
		}
		n.PartitionBy = append(n.PartitionBy, c.Index)
	}
	if n.TimeCol, err = matchOrder(t, in, b); err != nil {
		return nil, nil, err
	}
	if n.Proctime = proctime(in, n.TimeCol); !rowtime(in, n.TimeCol) {
		// Ordered by processing time: rows in their order of arrival, the watermark
		// following the clock below the match, as below a window over it.
		pre.Input = proctimeWatermarked(in, n.TimeCol)
	}
	for _, o := range t.OrderBy[1:] {
		x, err := b.bind(o.Expr)
		if err != nil {
			return nil, nil, err
		}
		c, ok := x.(*ColumnRef)
		if !ok {
			if x.Type().Kind == Null {
				return nil, nil, errorf(o.Expr, "cannot order by NULL")
			}
			pre.Exprs = append(pre.Exprs, x)
			pre.Names = append(pre.Names, fmt.Sprintf("$order%d", len(pre.Exprs)-1))
			c = &ColumnRef{Index: len(pre.Exprs) - 1}
		}
		n.OrderBy = append(n.OrderBy, SortKey{Col: c.Index, Desc: o.Desc})
	}
	if err := n.pattern(t); err != nil {
		return nil, nil, err
	}
	if t.Within != nil {
		lit, ok := t.Within.(*parser.IntervalLit)
		var ms int64
		if ok {
			x, err := intervalLiteral(lit)
			if err != nil {
				return nil, nil, err
			}
			l := x.(*Literal)
			ms, ok = l.Value.(int64)
			ok = ok && l.T.Kind == IntervalDayTime && ms > 0
		}
		if !ok {
			return nil, nil, errorf(t.Within, "Only constant intervals with millisecond resolution are supported as time constraints of patterns.")
		}
		n.Within = ms
	}
	nb := &navBinder{n: n, in: unq, inSchema: inSchema, pre: pre, derivedAt: map[string]int{}, timeCol: n.TimeCol}
	n.Defines = make([]Expr, len(n.Vars))
	n.DefineNavs = make([][]MatchNav, len(n.Vars))
	n.DefineSQL = make([]string, len(n.Vars))
	for _, d := range t.Define {
		v := n.varIndex(d.Var)
		if v < 0 {
			return nil, nil, errorf(d, "DEFINE %s names no variable of the PATTERN (%s)", d.Var, strings.Join(n.Vars, ", "))
		}
		if n.Defines[v] != nil {
			return nil, nil, errorf(d, "pattern variable %s is defined twice", d.Var)
		}
		nb.navs, nb.navAt = nil, nil
		x, navs, err := nb.bind(d.Cond)
		if err != nil {
			return nil, nil, err
		}
		if x.Type().Kind != Boolean && x.Type().Kind != Null {
			return nil, nil, errorf(d.Cond, "the condition of %s must be BOOLEAN, not %s", d.Var, x.Type())
		}
		n.Defines[v], n.DefineNavs[v], n.DefineSQL[v] = x, navs, d.Cond.String()
	}
	nb.navs, nb.navAt = nil, nil
	seen := map[string]bool{}
	for _, c := range n.PartitionBy {
		seen[strings.ToLower(inSchema[c].Name)] = true
	}
	for _, m := range t.Measures {
		if seen[strings.ToLower(m.Alias)] {
			return nil, nil, errorf(m, "MATCH_RECOGNIZE's output already has a column %s", m.Alias)
		}
		seen[strings.ToLower(m.Alias)] = true
		var x Expr
		if f, ok := m.Expr.(*parser.FuncCall); ok && strings.EqualFold(f.Name, "MATCH_PROCTIME") {
			if len(f.Args) > 0 || f.Star {
				return nil, nil, errorf(f, "MATCH_PROCTIME takes no argument")
			}
			// The clock as the match is emitted: a processing-time attribute of the output.
			x = &Call{Fn: FnProctime, T: Type{Kind: TimestampLTZ, Precision: 3, NotNull: true}}
		} else if x, _, err = nb.bind(m.Expr); err != nil {
			return nil, nil, err
		}
		if f, ok := m.Expr.(*parser.FuncCall); ok && strings.EqualFold(f.Name, "MATCH_ROWTIME") && n.RowtimeOut < 0 {
			n.RowtimeOut = len(n.PartitionBy) + len(n.Measures)
		}
		n.Measures = append(n.Measures, x)
		n.MeasureSQL = append(n.MeasureSQL, m.Expr.String())
		n.Names = append(n.Names, m.Alias)
	}
	n.MeasureNavs = nb.navs
	n.Input = pre
	return n, newScope(t.Alias, n.Schema()), nil
}

// matchOrder checks ORDER BY, which must start with an ascending time attribute (event
// or processing time), and returns its column.
func matchOrder(t *parser.MatchRecognize, in Node, b *exprBinder) (int, error) {
	if len(t.OrderBy) == 0 {
		return 0, errorf(t, "You must specify either rowtime or proctime for order by.")
	}
	o := t.OrderBy[0]
	x, err := b.bind(o.Expr)
	if err != nil {
		return 0, err
	}
	c, ok := x.(*ColumnRef)
	if !ok || !rowtime(in, c.Index) && !proctime(in, c.Index) {
		return 0, errorf(o.Expr, "You must specify either rowtime or proctime for order by as the first one: %s is no column with a WATERMARK nor a PROCTIME() column", o.Expr)
	}
	if o.Desc {
		return 0, errorf(o.Expr, "Primary sort order of a streaming table must be ascending on time.")
	}
	return c.Index, nil
}

func (n *MatchRecognize) varIndex(name string) int {
	for i, v := range n.Vars {
		if strings.EqualFold(v, name) {
			return i
		}
	}
	return -1
}

// maxProgram bounds a pattern's compiled size (quantifier bounds repeat their factor).
const maxProgram = 100_000

// pattern reads the PATTERN and AFTER MATCH clauses and compiles the program.
func (n *MatchRecognize) pattern(t *parser.MatchRecognize) error {
	var collect func(r *parser.RowPattern) error
	collect = func(r *parser.RowPattern) error {
		for _, seq := range r.Alts {
			for _, f := range seq {
				if f.Group != nil {
					if err := collect(f.Group); err != nil {
						return err
					}
					continue
				}
				if n.varIndex(f.Var) >= 0 {
					return errorf(f, "Pattern variables must be unique. That might change in the future.")
				}
				n.Vars = append(n.Vars, f.Var)
			}
		}
		return nil
	}
	if err := collect(t.Pattern); err != nil {
		return err
	}
	n.PatternSQL = "(" + t.Pattern.String() + ")"
	c := &matchCompiler{n: n}
	c.alts(t.Pattern)
	c.emit(MatchInstr{Op: OpMatch})
	if c.tooBig {
		return errorf(t.Pattern, "the pattern is too large: its quantifiers repeat it into more than %d steps", maxProgram)
	}
	n.Program = c.prog
	if reachesMatch(n.Program, 0) {
		return errorf(t.Pattern, "Patterns that can produce empty matches are not supported. There must be at least one non-optional state.")
	}
	for _, in := range n.Program {
		if in.Op == OpSplit && in.Greedy && reachesMatch(n.Program, in.Y) {
			return errorf(t.Pattern, "Greedy quantifiers are not allowed as the last element of a Pattern yet. Finish your pattern with either a simple variable or reluctant quantifier.")
		}
	}
	if s := t.Skip; s != nil {
		switch s.Kind {
		case "TO NEXT ROW":
			n.Skip = SkipToNextRow
		case "TO FIRST", "TO LAST":
			n.Skip = SkipToLast
			if s.Kind == "TO FIRST" {
				n.Skip = SkipToFirst
			}
			if n.SkipVar = n.varIndex(s.Var); n.SkipVar < 0 {
				return errorf(s, "AFTER MATCH SKIP %s names no variable of the PATTERN", s.Kind+" "+s.Var)
			}
			if first := t.Pattern.Alts[0][0]; n.Skip == SkipToFirst && len(t.Pattern.Alts) == 1 && strings.EqualFold(first.Var, s.Var) && first.Min > 0 {
				return errorf(s, "AFTER MATCH SKIP TO FIRST %s would start the next match where the last one started, an infinite loop: skip to the next row or a later variable", s.Var)
			}
		}
	}
	return nil
}

// reachesMatch reports whether OpMatch is reachable from pc without mapping a row.
func reachesMatch(prog []MatchInstr, pc int) bool {
	seen := make([]bool, len(prog))
	var walk func(pc int) bool
	walk = func(pc int) bool {
		if seen[pc] {
			return false
		}
		seen[pc] = true
		switch in := prog[pc]; in.Op {
		case OpMatch:
			return true
		case OpJump:
			return walk(in.X)
		case OpSplit:
			return walk(in.X) || walk(in.Y)
		}
		return false
	}
	return walk(pc)
}

type matchCompiler struct {
	n      *MatchRecognize
	prog   []MatchInstr
	tooBig bool
}

func (c *matchCompiler) emit(in MatchInstr) int {
	if len(c.prog) >= maxProgram {
		c.tooBig = true
		return len(c.prog) - 1
	}
	c.prog = append(c.prog, in)
	return len(c.prog) - 1
}

// alts compiles a|b|c: splits that try each alternative in turn, all jumping to the end.
func (c *matchCompiler) alts(r *parser.RowPattern) {
	var jumps []int
	for i, seq := range r.Alts {
		split := -1
		if i < len(r.Alts)-1 {
			split = c.emit(MatchInstr{Op: OpSplit})
			c.prog[split].X = split + 1
		}
		for _, f := range seq {
			c.factor(f)
		}
		if c.tooBig {
			return
		}
		if split >= 0 {
			jumps = append(jumps, c.emit(MatchInstr{Op: OpJump}))
			c.prog[split].Y = len(c.prog)
		}
	}
	for _, j := range jumps {
		c.prog[j].X = len(c.prog)
	}
}

func (c *matchCompiler) body(f *parser.PatternFactor) {
	if f.Group != nil {
		c.alts(f.Group)
		return
	}
	c.emit(MatchInstr{Op: OpVar, Var: c.n.varIndex(f.Var)})
}

// factor compiles a quantified variable or group: Min copies, then either a loop or
// Max-Min optional copies, each nested in the one before.
func (c *matchCompiler) factor(f *parser.PatternFactor) {
	for range f.Min {
		if c.body(f); c.tooBig {
			return
		}
	}
	greedy := !f.Reluctant
	if f.Max == -1 {
		split := c.emit(MatchInstr{Op: OpSplit, Greedy: greedy})
		c.body(f)
		c.emit(MatchInstr{Op: OpJump, X: split})
		c.setSplit(split, split+1, len(c.prog), greedy)
		return
	}
	var splits []int
	for range f.Max - f.Min {
		splits = append(splits, c.emit(MatchInstr{Op: OpSplit, Greedy: greedy}))
		if c.body(f); c.tooBig {
			return
		}
	}
	for _, s := range splits {
		c.setSplit(s, s+1, len(c.prog), greedy)
	}
}

// setSplit points a quantifier's split at its body and its exit: the body first when
// greedy, the exit first when reluctant.
func (c *matchCompiler) setSplit(at, body, exit int, greedy bool) {
	if at >= len(c.prog) {
		return
	}
	if greedy {
		c.prog[at].X, c.prog[at].Y = body, exit
	} else {
		c.prog[at].X, c.prog[at].Y = exit, body
	}
}

// navBinder binds DEFINE conditions and MEASURES: it replaces each navigation (A.price,
// LAST(A.price, 1), SUM(A.price), MATCH_ROWTIME()) by a column of a schema of navigation
// values, and binds what is left over that schema.
type navBinder struct {
	n         *MatchRecognize
	in        *scope
	inSchema  Schema
	pre       *Project
	derivedAt map[string]int
	navs      []MatchNav
	navAt     map[MatchNav]int
	timeCol   int
}

// navName is the name of navigation value i in the schema conditions are bound over.
func navName(i int) string { return "$nav" + strconv.Itoa(i) }

func (nb *navBinder) bind(e parser.Expr) (Expr, []MatchNav, error) {
	if nb.navAt == nil {
		nb.navAt = map[MatchNav]int{}
	}
	var failed error
	rewritten := rewriteExpr(e, func(x parser.Expr) (parser.Expr, bool) {
		if failed != nil {
			return x, true
		}
		nav, ok, err := nb.nav(x)
		if err != nil {
			failed = err
			return x, true
		}
		if !ok {
			return x, false
		}
		i, seen := nb.navAt[nav]
		if !seen {
			i = len(nb.navs)
			nb.navAt[nav] = i
			nb.navs = append(nb.navs, nav)
		}
		return &parser.Ident{Pos: x.Position(), Parts: []string{navName(i)}}, true
	})
	if failed != nil {
		return nil, nil, failed
	}
	var s Schema
	for i, nav := range nb.navs {
		s = append(s, Column{Name: navName(i), Type: nav.T})
	}
	b := &exprBinder{sc: newScope("", s)}
	x, err := b.bind(rewritten)
	if err != nil {
		return nil, nil, err
	}
	return x, append([]MatchNav(nil), nb.navs...), nil
}

var navAggs = map[string]AggFunc{"SUM": AggSum, "AVG": AggAvg, "COUNT": AggCount, "MIN": AggMin, "MAX": AggMax}

// nav recognises a navigation at x; ok is false for anything else.
func (nb *navBinder) nav(x parser.Expr) (MatchNav, bool, error) {
	switch x := x.(type) {
	case *parser.SubqueryExpr, *parser.ExistsExpr:
		return MatchNav{}, false, errorf(x, "subqueries are not supported in MATCH_RECOGNIZE")
	case *parser.OverExpr:
		return MatchNav{}, false, errorf(x, "OVER windows are not supported in MATCH_RECOGNIZE")
	case *parser.Ident:
		v, col, err := nb.qualified(x)
		if err != nil || col == nil {
			return MatchNav{}, false, err
		}
		ref, err := nb.in.resolve(col)
		if err != nil {
			return MatchNav{}, false, err
		}
		c := ref.(*ColumnRef)
		return MatchNav{Kind: NavLast, Var: v, Col: c.Index, T: c.T.Nullable()}, true, nil
	case *parser.FuncCall:
		name := strings.ToUpper(x.Name)
		switch name {
		case "NEXT":
			return MatchNav{}, false, errorf(x, "Unsupported call: NEXT; Flink's MATCH_RECOGNIZE refuses NEXT, only PREV, FIRST and LAST navigate")
		case "CLASSIFIER", "MATCH_NUMBER", "RUNNING", "FINAL":
			return MatchNav{}, false, errorf(x, "Unsupported call: %s in MATCH_RECOGNIZE", name)
		case "MATCH_PROCTIME":
			return MatchNav{}, false, errorf(x, "MATCH_PROCTIME() is a measure of its own, not part of an expression or a condition")
		case "MATCH_ROWTIME":
			if nb.n.Proctime {
				return MatchNav{}, false, errorf(x, "MATCH_ROWTIME() needs ORDER BY an event-time attribute; ordered by processing time, MATCH_PROCTIME() is the match's time")
			}
			if len(x.Args) > 1 {
				return MatchNav{}, false, errorf(x, "MATCH_ROWTIME takes no argument or the rowtime column")
			}
			col := nb.timeCol
			if len(x.Args) == 1 {
				e, _, err := nb.derived(x.Args[0])
				if err != nil {
					return MatchNav{}, false, err
				}
				if e != nb.timeCol {
					return MatchNav{}, false, errorf(x.Args[0], "MATCH_ROWTIME's argument must be the rowtime column %s", nb.inSchema[nb.timeCol].Name)
				}
			}
			return MatchNav{Kind: NavLast, Var: -1, Col: col, T: nb.inSchema[col].Type}, true, nil
		case "FIRST", "LAST", "PREV":
			if len(x.Args) < 1 || len(x.Args) > 2 || x.Star || x.Distinct {
				return MatchNav{}, false, errorf(x, "%s takes a column of a pattern variable and an optional offset", name)
			}
			off := 0
			if name == "PREV" {
				off = 1
			}
			if len(x.Args) == 2 {
				lit, ok := x.Args[1].(*parser.NumberLit)
				k, err := strconv.Atoi(litText(lit, ok))
				if !ok || err != nil || k < 0 {
					return MatchNav{}, false, errorf(x.Args[1], "the offset of %s must be a non-negative integer literal", name)
				}
				off = k
			}
			col, v, err := nb.derived(x.Args[0])
			if err != nil {
				return MatchNav{}, false, err
			}
			kind := map[string]MatchNavKind{"FIRST": NavFirst, "LAST": NavLast, "PREV": NavPrev}[name]
			if kind == NavPrev {
				v = -1
			}
			return MatchNav{Kind: kind, Var: v, Offset: off, Col: col, T: nb.pre.Exprs[col].Type().Nullable()}, true, nil
		}
		fn, ok := navAggs[name]
		if !ok {
			if isAggCall(x) {
				return MatchNav{}, false, errorf(x, "%s is not supported in MATCH_RECOGNIZE: only SUM, AVG, COUNT, MIN and MAX aggregate a pattern variable's rows", name)
			}
			return MatchNav{}, false, nil
		}
		if x.Distinct {
			return MatchNav{}, false, errorf(x, "DISTINCT aggregations are not supported in MATCH_RECOGNIZE.")
		}
		if x.Filter != nil {
			return MatchNav{}, false, errorf(x.Filter, "FILTER is not supported in MATCH_RECOGNIZE")
		}
		if x.Star || len(x.Args) == 0 {
			if fn != AggCount {
				return MatchNav{}, false, errorf(x, "%s needs an argument", name)
			}
			return MatchNav{Kind: NavAgg, Var: -1, Col: -1, Agg: fn, T: Type{Kind: BigInt, NotNull: true}}, true, nil
		}
		if len(x.Args) != 1 {
			return MatchNav{}, false, errorf(x, "%s takes one argument", name)
		}
		col, v, err := nb.derived(x.Args[0])
		if err != nil {
			return MatchNav{}, false, err
		}
		t := nb.pre.Exprs[col].Type()
		nav := MatchNav{Kind: NavAgg, Var: v, Col: col, Agg: fn}
		switch {
		case fn == AggCount:
			nav.T = Type{Kind: BigInt, NotNull: true}
		case fn == AggMin || fn == AggMax:
			if t.Kind == Decimal || !t.IsNumeric() && t.Kind != String && t.Kind != Timestamp && t.Kind != TimestampLTZ && t.Kind != Date && t.Kind != Boolean {
				return MatchNav{}, false, errorf(x, "%s over %s is not supported in MATCH_RECOGNIZE yet", name, t)
			}
			nav.T = t.Nullable()
		case !t.IsNumeric() || t.Kind == Decimal:
			return MatchNav{}, false, errorf(x, "%s in MATCH_RECOGNIZE needs an integer or DOUBLE argument, got %s", name, t)
		case fn == AggAvg || t.Kind == Double || t.Kind == Float:
			nav.T = TypeDouble
		default:
			nav.T = TypeBigInt
		}
		return nav, true, nil
	}
	return MatchNav{}, false, nil
}

func litText(l *parser.NumberLit, ok bool) string {
	if !ok {
		return ""
	}
	return l.Text
}

// qualified splits a column reference into its pattern variable (-1: none, every
// variable) and the column; col is nil when x is no column of the input.
func (nb *navBinder) qualified(x *parser.Ident) (int, *parser.Ident, error) {
	if len(x.Parts) == 1 {
		if strings.HasPrefix(x.Parts[0], "$nav") {
			return -1, nil, nil
		}
		return -1, x, nil
	}
	if len(x.Parts) == 2 {
		v := nb.n.varIndex(x.Parts[0])
		if v < 0 {
			return 0, nil, errorf(x, "%s is no pattern variable of the PATTERN (%s)", x.Parts[0], strings.Join(nb.n.Vars, ", "))
		}
		return v, &parser.Ident{Pos: x.Pos, Parts: x.Parts[1:]}, nil
	}
	return 0, nil, errorf(x, "MATCH_RECOGNIZE reads columns as var.column, not %s", x)
}

// derived binds the argument of a navigation or an aggregate over the input row, with
// its pattern variable (all of whose columns must have the same one) taken off, and
// returns the input column (of the projection below the match) that holds it.
func (nb *navBinder) derived(e parser.Expr) (int, int, error) {
	v := -2
	var failed error
	plain := rewriteExpr(e, func(x parser.Expr) (parser.Expr, bool) {
		switch x := x.(type) {
		case *parser.FuncCall:
			switch n := strings.ToUpper(x.Name); {
			case n == "FIRST" || n == "LAST" || n == "PREV" || n == "NEXT" || n == "MATCH_ROWTIME" || navAggs[n] != "" || isAggCall(x):
				if failed == nil {
					failed = errorf(x, "%s cannot be nested in a navigation or aggregate of MATCH_RECOGNIZE", x.Name)
				}
				return x, true
			}
		case *parser.Ident:
			w, col, err := nb.qualified(x)
			if err != nil || col == nil {
				if failed == nil {
					failed = err
				}
				return x, true
			}
			if v != -2 && v != w && failed == nil {
				failed = errorf(x, "all columns of a navigation or aggregate must use the same pattern variable, as in LAST(A.price * A.tax)")
			}
			v = w
			return col, true
		}
		return x, false
	})
	if failed != nil {
		return 0, 0, failed
	}
	if v == -2 {
		v = -1
	}
	x, err := (&exprBinder{sc: nb.in}).bind(plain)
	if err != nil {
		return 0, 0, err
	}
	if c, ok := x.(*ColumnRef); ok {
		return c.Index, v, nil
	}
	key := ExprSQL(x, nb.inSchema)
	if i, ok := nb.derivedAt[key]; ok {
		return i, v, nil
	}
	nb.pre.Exprs = append(nb.pre.Exprs, x)
	nb.pre.Names = append(nb.pre.Names, fmt.Sprintf("$match%d", len(nb.pre.Exprs)-1))
	nb.derivedAt[key] = len(nb.pre.Exprs) - 1
	return len(nb.pre.Exprs) - 1, v, nil
}

var exprType = reflect.TypeOf((*parser.Expr)(nil)).Elem()

// rewriteExpr returns e with every subexpression x for which f returns (y, true)
// replaced by y (whose own subexpressions are left alone); the others are copied and
// their subexpressions rewritten. e itself is not changed.
func rewriteExpr(e parser.Expr, f func(parser.Expr) (parser.Expr, bool)) parser.Expr {
	if e == nil || reflect.ValueOf(e).IsNil() {
		return e
	}
	if y, done := f(e); done {
		return y
	}
	v := reflect.ValueOf(e)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return e
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	rewriteFields(cp.Elem(), f)
	return cp.Interface().(parser.Expr)
}

// rewriteFields rewrites the expressions held in the fields of struct value s, in
// slices and nested structs too (CASE's WHEN branches).
func rewriteFields(s reflect.Value, f func(parser.Expr) (parser.Expr, bool)) {
	for i := 0; i < s.NumField(); i++ {
		fv := s.Field(i)
		if !fv.CanSet() {
			continue
		}
		fv.Set(rewriteValue(fv, f))
	}
}

func rewriteValue(v reflect.Value, f func(parser.Expr) (parser.Expr, bool)) reflect.Value {
	switch {
	case v.Type() == exprType:
		if v.IsNil() {
			return v
		}
		return reflect.ValueOf(rewriteExpr(v.Interface().(parser.Expr), f))
	case v.Kind() == reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(rewriteValue(v.Index(i), f))
		}
		return out
	case v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct:
		if v.Type() == reflect.TypeOf((*parser.Query)(nil)) {
			return v
		}
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		rewriteFields(cp.Elem(), f)
		return cp
	case v.Kind() == reflect.Struct:
		cp := reflect.New(v.Type()).Elem()
		cp.Set(v)
		rewriteFields(cp, f)
		return cp
	}
	return v
}
