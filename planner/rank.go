package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Rank numbers the rows of each partition (the rows with equal PartitionBy values) in
// OrderBy order, as ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) does, and keeps the
// rows numbered Start to End: Flink's Top-N. Rows with equal ORDER BY values are numbered
// in their order of arrival, earlier first (later first for a deduplication that keeps the
// last row). NULL orders before any value.
//
// Its result is updating: a row entering the range is inserted, a row pushed out of it
// deleted, and with RowNumber a row whose number changes is updated. Two forms are not:
//   - a window Top-N (Window set): PARTITION BY holds the window_start and window_end of
//     a window function, and each window's rows are ranked once, final, when the
//     watermark passes the window's end;
//   - a deduplication that keeps the first row (see Dedup) waits for the watermark to
//     pass a key's earliest row and then emits it once.
//
// A Rank without an upper bound (End 0) is what a select list with ROW_NUMBER() plans
// to; the WHERE of the enclosing query bounds it (foldRankFilter), and a plan that keeps
// one unbounded is an error (checkRanks).
type Rank struct {
	Input       Node
	PartitionBy []int
	OrderBy     []SortKey
	Start, End  int64  // the row numbers kept, from 1; End 0: not bounded yet
	RowNumber   bool   // the output has the row number, named Name, after the input's columns
	Name        string // the row number column's name
	Window      *WindowTVF
	WindowEnd   int        // window Top-N: the input column holding window_end
	Pos         parser.Pos // where ROW_NUMBER() is written, or the view holding it is read, for errors
	View        string     // the view holding the ROW_NUMBER(), if any
}

// SortKey is one ORDER BY column of a Rank.
type SortKey struct {
	Col  int
	Desc bool
}

// The kinds of deduplication (Rank.Dedup).
const (
	KeepFirstRow = "FirstRow"
	KeepLastRow  = "LastRow"
)

// Dedup reports whether the rank is a deduplication, as Flink recognises one: the first
// row of each key (ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) = 1, KeepFirstRow) or
// the last (ORDER BY ts DESC, KeepLastRow), where ts is an event-time attribute of an
// insert-only input and the row number is not selected. Keeping the first row is
// insert-only: a key's row is emitted once the watermark passes its time, so no earlier
// row can replace it (a later one is late). Keeping the last row updates a key's row
// (-U/+U) whenever a row at the same time or later arrives.
func (n *Rank) Dedup() string {
	if n.Window != nil || n.Start != 1 || n.End != 1 || n.RowNumber || len(n.OrderBy) != 1 ||
		n.Input.Updating() || !rowtime(n.Input, n.OrderBy[0].Col) {
		return ""
	}
	if n.OrderBy[0].Desc {
		return KeepLastRow
	}
	return KeepFirstRow
}

func (n *Rank) Schema() Schema {
	s := append(Schema(nil), n.Input.Schema()...)
	if n.RowNumber {
		s = append(s, Column{Name: n.Name, Type: Type{Kind: BigInt, NotNull: true}})
	}
	return s
}

func (n *Rank) Children() []Node { return []Node{n.Input} }

func (n *Rank) Updating() bool {
	if len(n.OrderBy) == 0 && !n.Input.Updating() {
		return false // LIMIT n: the first n rows, which no later one displaces
	}
	return n.Window == nil && n.Dedup() != KeepFirstRow
}

func (n *Rank) Describe() string {
	in := n.Input.Schema()
	names := func(cols []int) string {
		s := make([]string, len(cols))
		for i, c := range cols {
			s[i] = in[c].Name
		}
		return strings.Join(s, ", ")
	}
	if keep := n.Dedup(); keep != "" {
		order := "ROWTIME"
		if proctime(n.Input, n.OrderBy[0].Col) {
			order = "PROCTIME"
		}
		return fmt.Sprintf("Deduplicate(keep=[%s], key=[%s], order=[%s])", keep, names(n.PartitionBy), order)
	}
	order := make([]string, len(n.OrderBy))
	for i, k := range n.OrderBy {
		order[i] = in[k.Col].Name
		if k.Desc {
			order[i] += " DESC"
		}
	}
	end := fmt.Sprint(n.End)
	if n.End == 0 {
		end = "unbounded"
	}
	args := fmt.Sprintf("rankType=[ROW_NUMBER], rankRange=[rankStart=%d, rankEnd=%s], partitionBy=[%s], orderBy=[%s], select=[%s]",
		n.Start, end, names(n.PartitionBy), strings.Join(order, ", "), strings.Join(schemaNames(n.Schema()), ", "))
	if n.Window != nil {
		return fmt.Sprintf("WindowRank(window=[%s], %s)", n.Window.Kind, args)
	}
	strategy := "AppendFastStrategy"
	if n.Input.Updating() {
		strategy = "RetractStrategy"
	}
	return fmt.Sprintf("Rank(strategy=[%s], %s)", strategy, args)
}

// overItem returns the select item that is a ranking function, or nil; a ranking
// function anywhere else in the list is an error.
func overItem(items []*parser.SelectItem) (*parser.SelectItem, int, error) {
	var found *parser.SelectItem
	at := -1
	for i, it := range items {
		if o, ok := it.Expr.(*parser.OverExpr); ok && o.Call == nil {
			if found != nil {
				return nil, 0, errorf(o, "a SELECT can have one ROW_NUMBER() OVER (...); rank again in an enclosing query")
			}
			found, at = it, i
		}
	}
	return found, at, nil
}

// rank plans the ranking function of a select list, item, over input: a Rank without an
// upper bound yet, after a projection computing the PARTITION BY and ORDER BY
// expressions that are no columns. It returns the Rank and a binder for the select list
// over it, which reads the ranking function as the Rank's row number.
func (p *Planner) rank(item *parser.SelectItem, at int, input Node, b *exprBinder) (Node, *exprBinder, error) {
	o := item.Expr.(*parser.OverExpr)
	switch {
	case o.Fn != "ROW_NUMBER":
		return nil, nil, errorf(o, "%s() is not supported: Top-N and deduplication number rows with ROW_NUMBER()", o.Fn)
	case len(o.OrderBy) == 0:
		return nil, nil, errorf(o, "ROW_NUMBER() OVER needs an ORDER BY: Top-N and deduplication rank the rows of a partition by it")
	}
	in := input.Schema()
	pre := &Project{Input: input}
	for i, c := range in {
		pre.Exprs = append(pre.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		pre.Names = append(pre.Names, c.Name)
	}
	// column binds e and returns its column in pre, which computes it if it is no column.
	column := func(e parser.Expr, what string) (int, error) {
		x, err := b.bind(e)
		if err != nil {
			return 0, err
		}
		if c, ok := x.(*ColumnRef); ok {
			return c.Index, nil
		}
		if x.Type().Kind == Null {
			return 0, errorf(e, "cannot %s NULL", what)
		}
		pre.Exprs = append(pre.Exprs, x)
		pre.Names = append(pre.Names, fmt.Sprintf("$%s%d", strings.ReplaceAll(what, " ", ""), len(pre.Exprs)-1))
		return len(pre.Exprs) - 1, nil
	}
	r := &Rank{Start: 1, RowNumber: true, Name: itemName(item, at), Pos: o.Pos}
	for _, e := range o.PartitionBy {
		c, err := column(e, "partition by")
		if err != nil {
			return nil, nil, err
		}
		r.PartitionBy = append(r.PartitionBy, c)
	}
	for _, k := range o.OrderBy {
		c, err := column(k.Expr, "order by")
		if err != nil {
			return nil, nil, err
		}
		r.OrderBy = append(r.OrderBy, SortKey{Col: c, Desc: k.Desc})
	}
	r.Input = input
	if len(pre.Exprs) > len(in) {
		r.Input = pre
	}
	r.Window, r.WindowEnd = rankWindow(r.Input, r.PartitionBy)
	number := &ColumnRef{Index: len(r.Input.Schema()), Name: r.Name, T: Type{Kind: BigInt, NotNull: true}}
	return r, &exprBinder{sc: b.sc, over: map[*parser.OverExpr]Expr{o: number}}, nil
}

// rankWindow finds the window function whose window_start and window_end are both among
// the partition columns of an insert-only input, and the column holding window_end.
func rankWindow(input Node, partition []int) (*WindowTVF, int) {
	if input.Updating() {
		return nil, 0
	}
	starts, ends := map[*WindowTVF]bool{}, map[*WindowTVF]int{}
	for _, c := range partition {
		switch w, col := windowColumnOf(input, c); col {
		case "window_start":
			starts[w] = true
		case "window_end":
			ends[w] = c
		}
	}
	for w, end := range ends {
		if starts[w] {
			return w, end
		}
	}
	return nil, 0
}

// finalWindowOf is windowOf that also sees the window_start and window_end of an
// insert-only window aggregate's output other than a SESSION window's: its rows are
// final when their window fires, before the watermark that fired them goes on, so a
// further aggregate or join on those bounds can treat them as rows of the same windows.
// (A session's bounds are not a window function's: rows of it cannot be merged again.)
func finalWindowOf(n Node, i int) (*WindowTVF, string) {
	if w, col := windowOf(n, i); w != nil {
		return w, col
	}
	w, col := windowColumnOf(n, i)
	if w == nil || w.Kind == "SESSION" || n.Updating() {
		return nil, ""
	}
	return w, col
}

// windowColumnOf is windowOf that also sees the window_start and window_end of a window
// aggregate's output.
func windowColumnOf(n Node, i int) (*WindowTVF, string) {
	switch n := n.(type) {
	case *Aggregate:
		switch {
		case n.Window == nil:
		case i == n.WindowStart:
			return n.Window, "window_start"
		case i == n.WindowEnd:
			return n.Window, "window_end"
		}
		return nil, ""
	case *Project:
		if c, ok := n.Exprs[i].(*ColumnRef); ok {
			return windowColumnOf(n.Input, c.Index)
		}
		return nil, ""
	case *Filter:
		return windowColumnOf(n.Input, i)
	}
	return windowOf(n, i)
}

// pendingRank returns the Rank without an upper bound whose row number is column i of
// n, looking through projections and filters, or nil.
func pendingRank(n Node, i int) *Rank {
	switch n := n.(type) {
	case *Rank:
		if n.End == 0 && n.RowNumber && i == len(n.Input.Schema()) {
			return n
		}
	case *Project:
		if c, ok := n.Exprs[i].(*ColumnRef); ok {
			return pendingRank(n.Input, c.Index)
		}
	case *Filter:
		return pendingRank(n.Input, i)
	}
	return nil
}

// boundRank returns n with the pending Rank whose row number is its column i bounded to
// [start, end].
func boundRank(n Node, i int, start, end int64) Node {
	switch n := n.(type) {
	case *Rank:
		c := *n
		c.Start, c.End = start, end
		return &c
	case *Project:
		c := *n
		c.Input = boundRank(n.Input, n.Exprs[i].(*ColumnRef).Index, start, end)
		return &c
	case *Filter:
		return &Filter{Input: boundRank(n.Input, i, start, end), Cond: n.Cond}
	}
	return n
}

// foldRankFilter folds the conditions of a WHERE (cond, bound over input) that bound the
// row number of a pending Rank below input into that Rank, Flink's Top-N pattern:
// SELECT * FROM (SELECT *, ROW_NUMBER() OVER (...) AS rownum FROM t) WHERE rownum <= N.
// It returns the new input and what is left of cond (nil if nothing).
func foldRankFilter(input Node, cond Expr, where parser.Expr) (Node, Expr, error) {
	type bounds struct{ lo, hi int64 }
	found := map[int]*bounds{}
	var order []int
	var rest []Expr
	for _, c := range conjuncts(cond) {
		ranked := -1
		mapColumns(c, func(ref *ColumnRef) Expr {
			if pendingRank(input, ref.Index) != nil {
				ranked = ref.Index
			}
			return ref
		})
		if ranked < 0 {
			rest = append(rest, c)
			continue
		}
		name := input.Schema()[ranked].Name
		col, op, k, ok := rankBound(c)
		if !ok || col != ranked {
			return nil, nil, errorf(where, "the filter on %s must bound it by constants, as in %s <= N, %s < N, %s = N or %s BETWEEN M AND N",
				name, name, name, name, name)
		}
		b := found[col]
		if b == nil {
			b = &bounds{lo: 1, hi: math.MaxInt64}
			found[col] = b
			order = append(order, col)
		}
		switch op {
		case FnLt:
			b.hi = min(b.hi, k-1)
		case FnLe:
			b.hi = min(b.hi, k)
		case FnEq:
			b.lo, b.hi = max(b.lo, k), min(b.hi, k)
		case FnGt:
			b.lo = max(b.lo, k+1)
		case FnGe:
			b.lo = max(b.lo, k)
		}
	}
	for _, col := range order {
		b, name := found[col], input.Schema()[col].Name
		switch {
		case b.hi == math.MaxInt64:
			return nil, nil, errorf(where, "the filter on %s needs an upper bound: %s <= N keeps the top N rows, %s = 1 the first", name, name, name)
		case b.lo > b.hi:
			return nil, nil, errorf(where, "the filter on %s keeps no row: it asks for %d to %d", name, b.lo, b.hi)
		}
		input = boundRank(input, col, b.lo, b.hi)
	}
	if len(rest) == 0 {
		return input, nil, nil
	}
	return input, and(rest), nil
}

// rankBound recognises column op constant (or constant op column), op one of < <= = >=
// >, and returns it as column op constant.
func rankBound(e Expr) (col int, op Func, k int64, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || len(c.Args) != 2 {
		return 0, "", 0, false
	}
	flip := map[Func]Func{FnLt: FnGt, FnLe: FnGe, FnGt: FnLt, FnGe: FnLe, FnEq: FnEq}
	op, isCmp := c.Fn, false
	if _, isCmp = flip[op]; !isCmp {
		return 0, "", 0, false
	}
	ref, isRef := c.Args[0].(*ColumnRef)
	lit, isLit := c.Args[1].(*Literal)
	if !isRef {
		ref, isRef = c.Args[1].(*ColumnRef)
		lit, isLit = c.Args[0].(*Literal)
		op = flip[op]
	}
	if !isRef || !isLit {
		return 0, "", 0, false
	}
	switch v := lit.Value.(type) {
	case int64:
		return ref.Index, op, v, true
	case int32:
		return ref.Index, op, int64(v), true
	}
	return 0, "", 0, false
}

// inView notes, in the plan just made of view's query, where the view is read: the
// place to report its ROW_NUMBER() if the query reading it does not bound it.
func inView(n Node, view string, at parser.Pos) {
	Walk(n, func(x Node) {
		if r, ok := x.(*Rank); ok && r.End == 0 && r.View == "" {
			r.View, r.Pos = view, at
		}
	})
}

// checkRanks refuses a plan that holds a Rank its query did not bound.
func checkRanks(n Node) error {
	var err error
	Walk(n, func(x Node) {
		r, ok := x.(*Rank)
		switch {
		case !ok || r.End != 0 || err != nil:
		case r.View != "":
			err = &Error{Pos: r.Pos, Msg: fmt.Sprintf("view %[1]s ranks rows with ROW_NUMBER(): filter on its row number, as in SELECT * FROM %[1]s WHERE %[2]s <= N", r.View, r.Name)}
		default:
			err = &Error{Pos: r.Pos, Msg: fmt.Sprintf("ROW_NUMBER() OVER needs a filter on its row number in an enclosing query: "+
				"SELECT * FROM (SELECT ..., ROW_NUMBER() OVER (...) AS %[1]s FROM t) WHERE %[1]s <= N", r.Name)}
		}
	})
	return err
}

// projectedRank matches a projection over a Rank, with a filter between or not (f nil).
func projectedRank(n Node) (p *Project, f *Filter, r *Rank, ok bool) {
	if p, ok = n.(*Project); !ok {
		return nil, nil, nil, false
	}
	below := p.Input
	if f, ok = below.(*Filter); ok {
		below = f.Input
	}
	r, ok = below.(*Rank)
	return p, f, r, ok
}

// pruneRowNumber drops the row number of a Rank when the projection above it (and a
// filter between) does not read it: Top-N without the row number emits fewer changes.
func pruneRowNumber(n Node) Node {
	p, f, r, ok := projectedRank(n)
	if !ok || !r.RowNumber || r.End == 0 {
		return n
	}
	number := len(r.Input.Schema())
	exprs := p.Exprs
	if f != nil {
		exprs = append([]Expr{f.Cond}, exprs...)
	}
	for _, e := range exprs {
		if readsColumn(e, number) {
			return n
		}
	}
	c := *r
	c.RowNumber = false
	proctimeDedup(&c)
	var in Node = &c
	if f != nil {
		in = &Filter{Input: &c, Cond: f.Cond}
	}
	return &Project{Input: in, Exprs: p.Exprs, Names: p.Names}
}

// pruneRankColumns narrows a Rank's input, under a projection (and a filter between)
// that reads only some of its columns, to those and the columns it ranks by, as Flink's
// planner does: a Top-N stores its rows, and a join below it stores and pairs what the
// Top-N reads (q9 ranks pairs of an auction and a bid whose channel and url nobody
// reads). Not a window Top-N, whose input is its window's.
func pruneRankColumns(n Node) Node {
	p, f, r, ok := projectedRank(n)
	if !ok || r.Window != nil || r.End == 0 {
		return n
	}
	width := len(r.Input.Schema())
	used := make([]bool, width)
	mark := func(e Expr) {
		walkColumns(e, func(c *ColumnRef) {
			if c.Index < width { // not the row number
				used[c.Index] = true
			}
		})
	}
	for _, e := range p.Exprs {
		mark(e)
	}
	if f != nil {
		mark(f.Cond)
	}
	for _, c := range r.PartitionBy {
		used[c] = true
	}
	for _, k := range r.OrderBy {
		used[k.Col] = true
	}
	in, at := keptColumns(r.Input, used)
	if in == r.Input {
		return n
	}
	c := *r
	c.Input = removeIdentityProject(pruneJoinColumns(in)) // a join below now stores less
	c.PartitionBy = remap(r.PartitionBy, at)
	c.OrderBy = make([]SortKey, len(r.OrderBy))
	for i, k := range r.OrderBy {
		c.OrderBy[i] = SortKey{Col: at[k.Col], Desc: k.Desc}
	}
	if c.Dedup() != r.Dedup() {
		return n // the narrowed input lost the time attribute a deduplication needs
	}
	schema := c.Schema()
	moved := func(e Expr) Expr {
		return mapColumns(e, func(ref *ColumnRef) Expr {
			i := len(c.Input.Schema()) // the row number
			if ref.Index < width {
				i = at[ref.Index]
			}
			return &ColumnRef{Index: i, Name: schema[i].Name, T: ref.T}
		})
	}
	var filters []*Filter
	if f != nil {
		filters = []*Filter{f}
	}
	return reproject(&c, filters, p, moved)
}

// proctimeDedup makes r, ranked by a processing-time attribute of an event-time stream
// (or of a query's SELECT), a deduplication in the rows' order of arrival, as Flink's
// is: a WatermarkAssigner whose watermark follows the clock replaces the stream's
// event-time one below it, as it does below a window over that attribute.
func proctimeDedup(r *Rank) {
	if r.Dedup() != "" || len(r.OrderBy) != 1 || !proctime(r.Input, r.OrderBy[0].Col) {
		return
	}
	in := r.Input
	r.Input = proctimeWatermarked(in, r.OrderBy[0].Col)
	if r.Dedup() == "" {
		r.Input = in // no deduplication: a Top-N ranks the times as values
	}
}

// readsColumn reports whether e reads column i.
func readsColumn(e Expr, i int) bool {
	found := false
	mapColumns(e, func(c *ColumnRef) Expr {
		found = found || c.Index == i
		return c
	})
	return found
}
