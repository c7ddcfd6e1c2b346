package planner

import (
	"fmt"
	"strconv"

	"github.com/streamsql/streamsql/parser"
)

// orderLimit plans a query's ORDER BY ... LIMIT n over its result out as a global Top-N:
// a Rank without PARTITION BY that keeps the first n rows in that order and emits no row
// number. LIMIT n alone keeps the first n rows to arrive. The ORDER BY expressions are
// over the query's output columns; those that are not one are computed before the rank
// and dropped after it.
func (p *Planner) orderLimit(q *parser.Query, out Node) (Node, error) {
	if q.Limit == nil {
		return p.orderAll(q, out)
	}
	limit, ok := q.Limit.(*parser.NumberLit)
	n, err := int64(0), error(nil)
	if ok {
		n, err = strconv.ParseInt(limit.Text, 10, 64)
	}
	if !ok || err != nil {
		return nil, errorf(q.Limit, "LIMIT takes a constant whole number of rows, got %s", q.Limit)
	}
	schema := out.Schema()
	if n == 0 {
		return &Filter{Input: out, Cond: &Literal{Value: false, T: TypeBoolean}}, nil
	}
	input, keys, pre, err := orderKeys(q, out)
	if err != nil {
		return nil, err
	}
	var ranked Node = &Rank{Input: input, OrderBy: keys, Start: 1, End: n, Pos: q.Position()}
	if input == pre {
		ranked = &Project{Input: ranked, Exprs: pre.Exprs[:len(schema)], Names: pre.Names[:len(schema)]}
	}
	return ranked, nil
}

// orderAll plans ORDER BY without LIMIT as a Sort, where Flink allows one: over bounded
// input by anything; over unbounded input when the first key is an event-time attribute
// of an insert-only input, ascending (the rows come out in time order as the watermark
// passes them; later keys order the rows of one time).
func (p *Planner) orderAll(q *parser.Query, out Node) (Node, error) {
	schema := out.Schema()
	input, keys, pre, err := orderKeys(q, out)
	if err != nil {
		return nil, err
	}
	s := &Sort{Input: input, Keys: keys}
	if !p.bounded(input) {
		if input.Updating() || keys[0].Desc || !rowtime(input, keys[0].Col) {
			return nil, errorf(q.OrderBy[0].Expr, "ORDER BY over unbounded input must start with an event-time attribute, ascending, "+
				"of insert-only rows (as in Flink): order by the time column first, or add LIMIT n for a Top-N")
		}
		s.ByTime = true
	}
	var sorted Node = s
	if input == pre {
		sorted = &Project{Input: s, Exprs: pre.Exprs[:len(schema)], Names: pre.Names[:len(schema)]}
	}
	return sorted, nil
}

// orderKeys binds a query's ORDER BY over its output out: the sort keys, and the input
// to sort. An expression that is not an output column is computed by a projection pre
// (then the input) after out's columns, which the caller drops after sorting.
func orderKeys(q *parser.Query, out Node) (Node, []SortKey, *Project, error) {
	schema := out.Schema()
	b := &exprBinder{sc: newScope("", schema)}
	pre := &Project{Input: out}
	for i, c := range schema {
		pre.Exprs = append(pre.Exprs, &ColumnRef{Index: i, Name: c.Name, T: c.Type})
		pre.Names = append(pre.Names, c.Name)
	}
	var keys []SortKey
	for i, o := range q.OrderBy {
		e, err := b.bind(o.Expr)
		if err != nil {
			return nil, nil, nil, err
		}
		if e.Type().IsNested() {
			return nil, nil, nil, errorf(o.Expr, "ORDER BY cannot order by %s values", e.Type().Nullable())
		}
		col, isCol := e.(*ColumnRef)
		if !isCol {
			col = &ColumnRef{Index: len(pre.Exprs), T: e.Type()}
			pre.Exprs = append(pre.Exprs, e)
			pre.Names = append(pre.Names, "$order"+strconv.Itoa(i))
		}
		keys = append(keys, SortKey{Col: col.Index, Desc: o.Desc})
	}
	var input Node = out
	if len(pre.Exprs) > len(schema) {
		input = pre
	}
	return input, keys, pre, nil
}

// orderedBlock plans a SELECT block's ORDER BY ... LIMIT, whose expressions may also be
// over the block's input or its aggregates (ORDER BY price, ORDER BY COUNT(*) DESC):
// those that are not over its output are selected as hidden columns, which the Top-N
// orders by and a projection then drops. out is the block planned without them.
func (p *Planner) orderedBlock(q *parser.Query, out Node, depth int) (Node, error) {
	b := &exprBinder{sc: newScope("", out.Schema())}
	wide := *q
	wide.Items = append([]*parser.SelectItem(nil), q.Items...)
	wide.OrderBy = append([]parser.OrderItem(nil), q.OrderBy...)
	for i, o := range q.OrderBy {
		if _, err := b.bind(o.Expr); err == nil || q.Distinct {
			continue // DISTINCT rows cannot carry more columns than they are distinct by
		}
		name := fmt.Sprintf("$order%d", i)
		wide.Items = append(wide.Items, &parser.SelectItem{Pos: o.Expr.Position(), Expr: o.Expr, Alias: name})
		wide.OrderBy[i].Expr = &parser.Ident{Pos: o.Expr.Position(), Parts: []string{name}}
	}
	if len(wide.Items) == len(q.Items) {
		return p.orderLimit(q, out)
	}
	wideOut, err := p.selectBlock(&wide, depth)
	if err != nil {
		return nil, err
	}
	ranked, err := p.orderLimit(&wide, wideOut)
	if err != nil {
		return nil, err
	}
	proj := &Project{Input: ranked}
	for i, c := range out.Schema() {
		proj.Exprs = append(proj.Exprs, &ColumnRef{Index: i, Name: c.Name, T: ranked.Schema()[i].Type})
		proj.Names = append(proj.Names, c.Name)
	}
	return proj, nil
}
