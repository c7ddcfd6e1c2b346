package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// WatermarkAssigner declares event time on its input, a table's scan: after each batch
// the watermark is the greatest value of Expr (the table's WATERMARK expression, over
// the input's columns) seen so far. Rows pass unchanged.
type WatermarkAssigner struct {
	Input   Node
	TimeCol int // the rowtime column
	Expr    Expr
	SQL     string // the expression as written
	// Proctime: TimeCol is a processing-time attribute (`AS PROCTIME()`): the watermark
	// follows the clock, also while no rows come, a millisecond behind it.
	Proctime bool
	// Table is the table whose WATERMARK this is, for its watermark options (see
	// IsWatermarkOption); nil for a processing-time attribute.
	Table *Table
}

// Watermark options of a table, as Flink names them (FLIP-296): sources in the same
// alignment group stop reading while their watermark is more than max-drift ahead of
// the group's least. A table of any connector accepts them, in its WITH clause or an
// OPTIONS hint.
const (
	WatermarkAlignmentGroup    = "scan.watermark.alignment.group"
	WatermarkAlignmentMaxDrift = "scan.watermark.alignment.max-drift"
	WatermarkAlignmentInterval = "scan.watermark.alignment.update-interval"
)

// IsWatermarkOption reports whether key is one of the watermark options above, which
// the engine reads, not the table's connector.
func IsWatermarkOption(key string) bool {
	switch strings.ToLower(key) {
	case WatermarkAlignmentGroup, WatermarkAlignmentMaxDrift, WatermarkAlignmentInterval:
		return true
	}
	return false
}

// WindowTVF assigns each row to its windows and adds the columns window_start,
// window_end and window_time (window_end - 1 ms) after the input's. A TUMBLE window
// holds a row once, a HOP window size/slide times, a CUMULATE window once per step
// until its size. Times are milliseconds; windows align to Offset. A SESSION window
// (Size is its gap) starts as [t, t+gap) for a row at t; its window aggregate merges the
// sessions of each PartitionBy key that overlap.
type WindowTVF struct {
	Input       Node
	Kind        string // TUMBLE, HOP, CUMULATE or SESSION
	TimeCol     int
	Size        int64
	Slide       int64 // HOP's slide, CUMULATE's step; Size for TUMBLE
	Offset      int64
	PartitionBy []int // SESSION's partition columns
}

func (n *WatermarkAssigner) Schema() Schema   { return n.Input.Schema() }
func (n *WatermarkAssigner) Children() []Node { return []Node{n.Input} }
func (n *WatermarkAssigner) Updating() bool   { return false }
func (n *WatermarkAssigner) Describe() string {
	if n.Proctime {
		return fmt.Sprintf("WatermarkAssigner(proctime=[%s])", n.Input.Schema()[n.TimeCol].Name)
	}
	return fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s])", n.Input.Schema()[n.TimeCol].Name, n.SQL)
}

func (n *WindowTVF) Schema() Schema {
	in := n.Input.Schema()
	// window_time, the last millisecond of the window, is a time attribute of the time
	// column's kind; like window_start and window_end it is kept to milliseconds,
	// TIMESTAMP(3), whatever the time column's precision.
	timeType := Type{Kind: in[n.TimeCol].Type.Kind, Precision: 3, NotNull: true}
	ts := Type{Kind: Timestamp, Precision: 3, NotNull: true}
	return append(append(Schema(nil), in...),
		Column{Name: "window_start", Type: ts}, Column{Name: "window_end", Type: ts}, Column{Name: "window_time", Type: timeType})
}
func (n *WindowTVF) Children() []Node { return []Node{n.Input} }
func (n *WindowTVF) Updating() bool   { return false }
func (n *WindowTVF) Describe() string {
	args := []string{duration(n.Size)}
	switch n.Kind {
	case "SESSION":
		args = []string{"gap " + duration(n.Size)}
		for _, c := range n.PartitionBy {
			args = append(args, "partition by "+n.Input.Schema()[c].Name)
		}
	case "HOP", "CUMULATE":
		args = []string{duration(n.Slide), duration(n.Size)}
	}
	if n.Offset != 0 {
		args = append(args, "offset "+duration(n.Offset))
	}
	return fmt.Sprintf("WindowTableFunction(window=[%s(time_col=[%s], %s)])", n.Kind, n.Input.Schema()[n.TimeCol].Name, strings.Join(args, ", "))
}

func duration(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// IsProctime reports whether column name is a processing-time attribute of the table:
// a `name AS PROCTIME()` column. In a table without a WATERMARK it is the table's time
// attribute; in one with a WATERMARK, windows over it follow the clock instead.
func (t *Table) IsProctime(name string) bool {
	for _, c := range t.Columns {
		if call, ok := c.Computed.(*Call); ok && call.Fn == FnProctime {
			return strings.EqualFold(c.Name, name)
		}
	}
	return false
}

// watermarked adds a table's WatermarkAssigner over its scan, if it declares one.
func watermarked(t *Table, scan Node) Node {
	if t.Watermark == nil {
		// Without a WATERMARK, a PROCTIME() column is the table's time attribute.
		for _, c := range t.Columns {
			if t.IsProctime(c.Name) {
				col := scan.Schema().Index(c.Name)
				ref := &ColumnRef{Index: col, Name: c.Name, T: scan.Schema()[col].Type}
				return &WatermarkAssigner{Input: scan, TimeCol: col, Expr: ref, SQL: "PROCTIME()", Proctime: true}
			}
		}
		return scan
	}
	return &WatermarkAssigner{Input: scan, TimeCol: scan.Schema().Index(t.Watermark.Column), Expr: t.Watermark.Expr, SQL: t.Watermark.SQL, Table: t}
}

// windowTable plans TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size)) and its kin, over a
// table, a view, a WITH query or a subquery whose time column is a time attribute.
func (p *Planner) windowTable(w *parser.WindowTable, depth int) (Node, *scope, error) {
	input, err := p.windowData(w, depth)
	if err != nil {
		return nil, nil, err
	}
	timeCol := input.Schema().Index(w.TimeCol)
	if timeCol < 0 {
		return nil, nil, errorf(w, "window %s: unknown column `%s` in DESCRIPTOR%s", w.Fn, w.TimeCol, suggest(w.TimeCol, schemaNames(input.Schema())))
	}
	if input.Updating() {
		return nil, nil, errorf(w, "window %s reads an updating input: window functions read insert-only rows", w.Fn)
	}
	if !rowtime(input, timeCol) && proctime(input, timeCol) {
		input = proctimeWatermarked(input, timeCol)
	}
	if !rowtime(input, timeCol) {
		return nil, nil, errorf(w, "window %s needs an event-time column: %s is not a time attribute (a column with a WATERMARK, passed through unchanged by views and subqueries)",
			w.Fn, w.TimeCol)
	}
	tvf := &WindowTVF{Input: input, Kind: w.Fn, TimeCol: timeCol}
	args, err := windowArgs(w)
	if err != nil {
		return nil, nil, err
	}
	var intervals []int64
	for _, a := range args {
		b := &exprBinder{sc: &scope{}}
		e, err := b.bind(a)
		if err != nil {
			return nil, nil, err
		}
		lit, ok := e.(*Literal)
		var ms int64
		if ok {
			ms, ok = lit.Value.(int64)
		}
		if !ok || lit.T.Kind != IntervalDayTime {
			return nil, nil, errorf(a, "window %s takes constant intervals such as INTERVAL '10' SECOND, got %s", w.Fn, a)
		}
		intervals = append(intervals, ms)
	}
	want := map[string]string{"TUMBLE": "a size", "HOP": "a slide and a size", "CUMULATE": "a step and a size"}
	counts := map[string]int{"TUMBLE": 1, "HOP": 2, "CUMULATE": 2, "SESSION": 1}
	n, known := counts[w.Fn]
	switch {
	case !known:
		return nil, nil, errorf(w, "unknown window function %s (TUMBLE, HOP, CUMULATE or SESSION)", w.Fn)
	case w.Fn == "SESSION" && len(intervals) != 1:
		return nil, nil, errorf(w, "window SESSION takes a gap after the DESCRIPTOR")
	case len(w.PartitionBy) > 0 && w.Fn != "SESSION":
		return nil, nil, errorf(w, "window %s takes no PARTITION BY (SESSION does)", w.Fn)
	case len(intervals) != n && len(intervals) != n+1:
		return nil, nil, errorf(w, "window %s takes %s, and optionally an offset, after the DESCRIPTOR", w.Fn, want[w.Fn])
	}
	for _, c := range w.PartitionBy {
		i := input.Schema().Index(c)
		if i < 0 {
			return nil, nil, errorf(w, "unknown column `%s` in PARTITION BY%s", c, suggest(c, schemaNames(input.Schema())))
		}
		tvf.PartitionBy = append(tvf.PartitionBy, i)
	}
	if len(intervals) > n {
		tvf.Offset = intervals[n]
	}
	tvf.Size, tvf.Slide = intervals[0], intervals[0]
	if n == 2 {
		tvf.Slide, tvf.Size = intervals[0], intervals[1]
	}
	switch {
	case tvf.Size <= 0 || tvf.Slide <= 0:
		return nil, nil, errorf(w, "window %s needs positive intervals", w.Fn)
	case tvf.Size%tvf.Slide != 0:
		return nil, nil, errorf(w, "window %s: the size %s must be a whole multiple of the %s %s", w.Fn, duration(tvf.Size),
			map[string]string{"HOP": "slide", "CUMULATE": "step"}[w.Fn], duration(tvf.Slide))
	}
	alias := w.Alias
	if alias == "" {
		alias = w.Table
	}
	return tvf, newScope(alias, tvf.Schema()), nil
}

// windowData plans what a window function reads. A table's time column must carry its
// WATERMARK; a view's or a query's must pass one through.
func (p *Planner) windowData(w *parser.WindowTable, depth int) (Node, error) {
	if w.Query != nil {
		n, _, err := p.query(w.Query, depth+1)
		return n, err
	}
	if tbl, ok := p.Catalog.Table(w.Table); ok && !p.isCTE(w.Table) {
		if (tbl.Watermark == nil || !strings.EqualFold(tbl.Watermark.Column, w.TimeCol)) && !tbl.IsProctime(w.TimeCol) {
			return nil, errorf(w, "window %s needs a time attribute: %s of table %s has no WATERMARK (declare WATERMARK FOR %s AS ..., or %s AS PROCTIME())",
				w.Fn, w.TimeCol, tbl.Name, w.TimeCol, w.TimeCol)
		}
		return scanWithComputed(tbl), nil
	}
	n, _, err := p.from(&parser.TableName{Pos: w.Pos, Name: w.Table}, depth)
	return n, err
}

// isCTE reports whether name is a WITH query in scope.
func (p *Planner) isCTE(name string) bool {
	for _, c := range p.ctes {
		if equalFold(c.def.Name, name) {
			return true
		}
	}
	return false
}

// windowParams are the arguments of each window function after its DESCRIPTOR, in
// positional order; the last, OFFSET, is optional.
var windowParams = map[string][]string{
	"TUMBLE":   {"SIZE", "OFFSET"},
	"HOP":      {"SLIDE", "SIZE", "OFFSET"},
	"CUMULATE": {"STEP", "SIZE", "OFFSET"},
	"SESSION":  {"GAP"},
}

// windowArgs returns a window function's arguments after its DESCRIPTOR in positional
// order, placing named ones by their names.
func windowArgs(w *parser.WindowTable) ([]parser.Expr, error) {
	if w.ArgNames == nil {
		return w.Args, nil
	}
	params, ok := windowParams[w.Fn]
	if !ok {
		return nil, errorf(w, "unknown window function %s (TUMBLE, HOP, CUMULATE or SESSION)", w.Fn)
	}
	byName := map[string]parser.Expr{}
	for i, name := range w.ArgNames {
		switch {
		case !slices.Contains(params, name):
			return nil, errorf(w.Args[i], "window %s has no argument %s (it takes DATA, TIMECOL, %s)", w.Fn, name, strings.Join(params, ", "))
		case byName[name] != nil:
			return nil, errorf(w.Args[i], "window %s: %s is given twice", w.Fn, name)
		}
		byName[name] = w.Args[i]
	}
	var args []parser.Expr
	for i, name := range params {
		a := byName[name]
		if a == nil {
			if name == "OFFSET" {
				break
			}
			return nil, errorf(w, "window %s needs its %s => argument", w.Fn, params[i])
		}
		args = append(args, a)
	}
	return args, nil
}

// windowOf says which window column of which WindowTVF column i of n is, looking
// through projections and filters; nil when it is none.
func windowOf(n Node, i int) (*WindowTVF, string) {
	switch n := n.(type) {
	case *WindowTVF:
		if in := len(n.Input.Schema()); i >= in {
			return n, []string{"window_start", "window_end", "window_time"}[i-in]
		}
	case *Project:
		if c, ok := n.Exprs[i].(*ColumnRef); ok {
			return windowOf(n.Input, c.Index)
		}
	case *Filter:
		return windowOf(n.Input, i)
	}
	return nil, ""
}

// groupWindowFns are the window functions of the older group-window form.
var groupWindowFns = map[string]bool{"TUMBLE": true, "HOP": true, "CUMULATE": true, "SESSION": true}

// groupWindow rewrites the group-window form of older scripts, FROM t GROUP BY
// TUMBLE(ts, INTERVAL ...) (and HOP(ts, slide, size)), into the window table function it
// stands for: FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), ...)) GROUP BY window_start,
// window_end. TUMBLE_START and its kin then name the window columns (see windowColumn).
func groupWindow(q *parser.Query) (*parser.Query, error) {
	at := -1
	for i, g := range q.GroupBy {
		if f, ok := g.(*parser.FuncCall); ok && groupWindowFns[strings.ToUpper(f.Name)] {
			if at >= 0 {
				return nil, errorf(g, "a query can group by one window only")
			}
			at = i
		}
	}
	if at < 0 {
		return q, nil
	}
	win := q.GroupBy[at].(*parser.FuncCall)
	table, ok := q.From.(*parser.TableName)
	if !ok {
		return nil, errorf(win, "GROUP BY %s reads a table directly: FROM table", win.Name)
	}
	var col *parser.Ident
	if len(win.Args) > 0 {
		col, _ = win.Args[0].(*parser.Ident)
	}
	if col == nil || len(win.Args) < 2 {
		return nil, errorf(win, "%s takes the time column, then intervals: %s(ts, INTERVAL '1' HOUR)", win.Name, strings.ToUpper(win.Name))
	}
	out := *q
	fn := strings.ToUpper(win.Name)
	wt := &parser.WindowTable{Pos: table.Pos, Fn: fn, Table: table.Name,
		TimeCol: col.Parts[len(col.Parts)-1], Args: win.Args[1:], Alias: table.Alias}
	if fn == "SESSION" {
		// A group window's sessions are per group: the other grouping columns partition.
		for i, g := range q.GroupBy {
			if id, ok := g.(*parser.Ident); ok && i != at {
				wt.PartitionBy = append(wt.PartitionBy, id.Parts[len(id.Parts)-1])
			} else if i != at {
				return nil, errorf(g, "GROUP BY SESSION(...) groups by columns only: %s is an expression", g)
			}
		}
	}
	out.From = wt
	windowCols := []parser.Expr{&parser.Ident{Pos: win.Pos, Parts: []string{"window_start"}},
		&parser.Ident{Pos: win.Pos, Parts: []string{"window_end"}}}
	if readsRowtime(q) { // TUMBLE_ROWTIME(...) and its kin select window_time
		windowCols = append(windowCols, &parser.Ident{Pos: win.Pos, Parts: []string{"window_time"}})
	}
	out.GroupBy = append(append(append([]parser.Expr(nil), q.GroupBy[:at]...), windowCols...), q.GroupBy[at+1:]...)
	return &out, nil
}

// readsRowtime reports whether q's SELECT or HAVING calls TUMBLE_ROWTIME, HOP_ROWTIME,
// SESSION_ROWTIME or CUMULATE_ROWTIME.
func readsRowtime(q *parser.Query) bool {
	found := false
	visit := func(e parser.Expr) {
		if col, ok := windowColumn(e); ok && col.(*parser.Ident).Parts[0] == "window_time" {
			found = true
		}
	}
	for _, it := range q.Items {
		if it.Expr != nil {
			walkExpr(it.Expr, visit)
		}
	}
	if q.Having != nil {
		walkExpr(q.Having, visit)
	}
	return found
}

// windowColumn reads TUMBLE_START(ts, ...) and its kin (_END, _ROWTIME; HOP_, SESSION_,
// CUMULATE_) as the window column they name.
func windowColumn(e parser.Expr) (parser.Expr, bool) {
	f, ok := e.(*parser.FuncCall)
	if !ok {
		return e, false
	}
	fn, part, ok := strings.Cut(strings.ToUpper(f.Name), "_")
	col := map[string]string{"START": "window_start", "END": "window_end", "ROWTIME": "window_time"}[part]
	if !ok || !groupWindowFns[fn] || col == "" {
		return e, false
	}
	return &parser.Ident{Pos: f.Pos, Parts: []string{col}}, true
}

// Sliced reports whether a HOP window aggregate can keep one group per slide-long
// slice, and combine slices into windows when they fire, instead of having each row
// copied into size/slide windows. It can when nothing between the window function and
// the aggregate computes with the window columns, and the aggregate groups by
// window_start and window_end only, as it does; its window function then assigns slices.
func (n *Aggregate) Sliced() bool {
	if n.Window == nil || n.Window.Kind != "HOP" || n.Emit.On() {
		return false
	}
	var path []Node // from the aggregate's input down to the window function
	var tvf *WindowTVF
	for x := n.Input; tvf == nil; {
		if w, ok := x.(*WindowTVF); ok {
			tvf = w
			break
		}
		path = append(path, x)
		c := x.Children()
		if len(c) != 1 {
			return false
		}
		x = c[0]
	}
	// The window columns of each node's output, by index: start, end or time.
	in := len(tvf.Input.Schema())
	win := map[int]string{in: "window_start", in + 1: "window_end", in + 2: "window_time"}
	uses := func(e Expr) bool {
		found := false
		mapColumns(e, func(c *ColumnRef) Expr {
			_, ok := win[c.Index]
			found = found || ok
			return c
		})
		return found
	}
	for i := len(path) - 1; i >= 0; i-- {
		switch x := path[i].(type) {
		case *Filter:
			if uses(x.Cond) {
				return false
			}
		case *Project:
			next := map[int]string{}
			for j, e := range x.Exprs {
				if c, ok := e.(*ColumnRef); ok && win[c.Index] != "" {
					next[j] = win[c.Index]
				} else if uses(e) {
					return false
				}
			}
			win = next
		default:
			return false
		}
	}
	for i, k := range n.Keys {
		if col := win[k]; col != "" && !(col == "window_start" && i == n.WindowStart || col == "window_end" && i == n.WindowEnd) {
			return false
		}
	}
	for _, a := range n.Aggs {
		for _, c := range a.Inputs() {
			if _, ok := win[c]; ok {
				return false
			}
		}
	}
	return true
}

// sessionKeys checks that a SESSION window aggregate groups by its window's bounds (and
// maybe its window_time, key time) and its PARTITION BY columns: sessions merge per key,
// so the keys are the partition.
func sessionKeys(w *WindowTVF, agg *Aggregate, start, end, timeKey int) error {
	if w.Kind != "SESSION" {
		return nil
	}
	var want, got []string
	for _, c := range w.PartitionBy {
		want = append(want, strings.ToLower(w.Input.Schema()[c].Name))
	}
	for i := range agg.Keys {
		if i != start && i != end && i != timeKey {
			got = append(got, strings.ToLower(agg.Names[i]))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("a SESSION window aggregate groups by window_start, window_end (and window_time) and its PARTITION BY columns (%s), not (%s)",
			strings.Join(want, ", "), strings.Join(got, ", "))
	}
	return nil
}

// PartitionKeys are the input columns that decide which task an aggregate's rows go to,
// and their key group. A window aggregate that merges groups (slices of a HOP window,
// the sessions of a key) needs all of a key's windows in one task: it partitions by its
// keys but the window bounds. Other aggregates partition by all their keys.
func (n *Aggregate) PartitionKeys() []int {
	if n.Window == nil || !(n.Window.Kind == "SESSION" || n.Sliced()) {
		return n.Keys
	}
	var keys []int
	timeKey := n.WindowTimeKey()
	for i, k := range n.Keys {
		if i != n.WindowStart && i != n.WindowEnd && i != timeKey {
			keys = append(keys, k)
		}
	}
	return keys
}

// WindowTimeKey returns the key of a window aggregate that is its window's window_time,
// -1 if none: a SESSION window's moves with the window's end as sessions merge.
func (n *Aggregate) WindowTimeKey() int {
	if n.Window == nil {
		return -1
	}
	for i, k := range n.Keys {
		if w, col := windowOf(n.Input, k); w != nil && col == "window_time" {
			return i
		}
	}
	return -1
}
