package planner

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Planner turns statements into plans against a catalog.
type Planner struct {
	Catalog *Catalog
	Emit    EmitControl // the session's emit options for window aggregates
	// Notice, when set, is told what the planner accepts but ignores (join hints).
	Notice func(msg string)
	// Bounded, when set, tells whether a table's source ends (a file read once, datagen
	// with a row count): ORDER BY without LIMIT sorts any bounded input.
	Bounded func(t *Table) bool
	// CanLookup, when set, says whether a table's connector serves lookup joins.
	CanLookup func(*Table) bool

	ctes []*cte // the common table expressions in scope, innermost last
}

// cte is a WITH query in scope: planned again wherever it is read, as a view is, in the
// scope it was defined in (the CTEs before it).
type cte struct {
	def   *parser.CTE
	scope []*cte
}

// PlanQuery plans a SELECT.
func (p *Planner) PlanQuery(q *parser.Query) (n Node, err error) {
	defer recoverBug(q, &err)
	n, err = p.planQuery(q)
	if err != nil {
		return nil, err
	}
	if err := checkRanks(n); err != nil {
		return nil, err
	}
	return n, nil
}

// planQuery plans a SELECT that may still hold a ROW_NUMBER() without a bound: a view's
// query, which the query reading the view filters.
func (p *Planner) planQuery(q *parser.Query) (Node, error) {
	n, _, err := p.query(q, 0)
	if err != nil {
		return nil, err
	}
	return rewrite(n), nil
}

// recoverBug turns a panic while planning (a bug, that some input reaches) into an
// error at the statement, so that no input crashes the process; fuzzing looks for them.
func recoverBug(at positioned, err *error) {
	if r := recover(); r != nil {
		*err = errorf(at, "internal planner error: %v", r)
	}
}

// PlanInsert plans INSERT INTO: the query, cast to the sink's columns, into a Sink.
func (p *Planner) PlanInsert(s *parser.InsertStmt) (_ Node, err error) {
	defer recoverBug(s, &err)
	t, ok := p.Catalog.Table(s.Table)
	if !ok {
		if _, isView := p.Catalog.View(s.Table); isView {
			return nil, errorf(s, "cannot INSERT INTO view %s", s.Table)
		}
		return nil, errorf(s, "unknown table `%s`%s", s.Table, suggest(s.Table, p.Catalog.Names()))
	}
	t, err = tableHints(t, s.Hints)
	if err != nil {
		return nil, err
	}
	n, _, err := p.query(s.Query, 0)
	if err != nil {
		return nil, err
	}
	target := t.PersistedSchema()
	for _, c := range t.Columns {
		if k, ok := t.MetadataOf(c); ok && !c.Virtual && !k.Writable {
			return nil, errorf(s, "table %s: metadata key '%s' of column `%s` cannot be written (the %s sink writes %s): declare the column METADATA VIRTUAL to leave it out of INSERT",
				t.Name, k.Key, c.Name, t.Connector(), writableKeys(t.Connector()))
		}
	}
	// With a column list, the query fills those columns and the rest are NULL.
	source := make([]int, len(target))
	for i := range source {
		source[i] = i
	}
	if len(s.Columns) > 0 {
		for i := range source {
			source[i] = -1
		}
		for j, c := range s.Columns {
			i := target.Index(c)
			if k := t.Schema().Index(c); i < 0 && k >= 0 && t.Columns[k].Virtual {
				return nil, errorf(s, "column `%s` of %s is METADATA VIRTUAL: it is only read, and an INSERT cannot write it", t.Columns[k].Name, t.Name)
			}
			if i < 0 {
				return nil, errorf(s, "table %s has no column `%s`%s", t.Name, c, suggest(c, schemaNames(target)))
			}
			source[i] = j
		}
		if len(s.Columns) != len(n.Schema()) {
			return nil, errorf(s.Query, "INSERT INTO %s names %d columns but the query produces %d", t.Name, len(s.Columns), len(n.Schema()))
		}
	} else if len(target) != len(n.Schema()) {
		return nil, errorf(s.Query, "INSERT INTO %s expects %d columns %s but the query produces %d %s", t.Name, len(target), target, len(n.Schema()), n.Schema())
	}
	in := n.Schema()
	proj := &Project{Input: n}
	for i, col := range target {
		var e Expr = &Literal{T: col.Type.Nullable()}
		if j := source[i]; j >= 0 {
			from := in[j].Type
			if _, ok := commonType(from, col.Type); !ok && !(from.Kind == String && col.Type.Kind == String) && !multisetIntoMap(from, col.Type) {
				return nil, errorf(s.Query, "column %s of %s is %s but the query produces %s", col.Name, t.Name, col.Type, from)
			}
			e = castTo(&ColumnRef{Index: j, Name: in[j].Name, T: from}, col.Type)
		}
		if k, ok := t.MetadataOf(t.Columns[t.Schema().Index(col.Name)]); ok {
			e = castTo(e, k.Type.Nullable()) // the sink writes the key's type
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Names = append(proj.Names, col.Name)
	}
	if err := checkRanks(n); err != nil {
		return nil, err
	}
	// Rewritten first: a deduplication whose row number is dropped inserts only.
	sink := rewrite(&Sink{Input: proj, Table: t})
	if sink.Updating() && appendOnly(t) {
		return nil, errorf(s, "table %s: the %s sink accepts only inserts, but the query produces updates", t.Name, t.Connector())
	}
	return sink, nil
}

// appendOnly reports whether a table's sink can only append rows: it cannot apply the
// retractions of an updating query.
func appendOnly(t *Table) bool {
	if t.Changelog() {
		return false
	}
	switch t.Connector() {
	case "filesystem", "kafka":
		return true
	case "postgres", "jdbc", "embedded":
		return len(t.PrimaryKey) == 0
	}
	return false
}

// query plans a SELECT block, returning its plan and the scope its output is visible as.
func (p *Planner) query(q *parser.Query, depth int) (Node, *scope, error) {
	if depth > 32 {
		return nil, nil, errorf(q, "views and subqueries are nested too deeply (or a view refers to itself)")
	}
	if len(q.With) > 0 {
		saved := p.ctes
		defer func() { p.ctes = saved }()
		for _, c := range q.With {
			for _, d := range q.With {
				if d == c {
					break
				}
				if equalFold(d.Name, c.Name) {
					return nil, nil, errorf(c, "WITH defines `%s` twice", c.Name)
				}
			}
			p.ctes = append(p.ctes[:len(p.ctes):len(p.ctes)], &cte{def: c, scope: p.ctes})
		}
	}
	var out Node
	var err error
	switch {
	case q.Set != nil:
		out, err = p.setOp(q.Set, depth)
	case q.Values != nil:
		out, err = p.values(q)
	default:
		out, err = p.selectBlock(q, depth)
	}
	if err != nil {
		return nil, nil, err
	}
	switch {
	case q.OrderBy != nil && q.Set == nil && q.Values == nil:
		out, err = p.orderedBlock(q, out, depth)
	case q.OrderBy != nil || q.Limit != nil:
		out, err = p.orderLimit(q, out)
	}
	if err != nil {
		return nil, nil, err
	}
	return out, newScope("", out.Schema()), nil
}

// selectBlock plans SELECT ... FROM ... WHERE ... GROUP BY ... HAVING ....
func (p *Planner) selectBlock(q *parser.Query, depth int) (Node, error) {
	if err := p.queryHints(q.Hints); err != nil {
		return nil, err
	}
	q, err := groupWindow(commaJoins(q))
	if err != nil {
		return nil, err
	}
	input, sc, err := p.from(q.From, depth)
	if err != nil {
		return nil, err
	}
	b := &exprBinder{sc: sc}
	preds, where := splitSubqueryPredicates(q.Where)
	hasAgg := len(q.GroupBy) > 0 || q.Having != nil
	for _, it := range q.Items {
		hasAgg = hasAgg || (!it.Star && containsAgg(it.Expr))
	}
	// Scalar subqueries: joined first, so that WHERE and the select list read them.
	subs := scalarSubqueries(where, nil)
	if !hasAgg {
		for _, it := range q.Items {
			subs = scalarSubqueries(it.Expr, subs)
		}
	}
	if input, err = p.scalarJoins(input, b, subs, depth); err != nil {
		return nil, err
	}
	if where != nil {
		cond, err := b.bind(where)
		if err != nil {
			return nil, err
		}
		checked, err := b.expect(where, cond, TypeBoolean)
		if err != nil {
			return nil, errorf(where, "WHERE needs a BOOLEAN condition, got %s", cond.Type().Nullable())
		}
		// A bound on the row number of a ROW_NUMBER() below makes it a Top-N.
		if input, checked, err = foldRankFilter(input, checked, where); err != nil {
			return nil, err
		}
		if checked != nil {
			input = &Filter{Input: input, Cond: checked}
		}
	}
	// IN, EXISTS and their negations: semi and anti joins over the filtered input.
	for _, pred := range preds {
		if input, err = p.semiJoin(input, sc, pred, depth); err != nil {
			return nil, err
		}
	}
	items, err := expandStars(q.Items, sc)
	if err != nil {
		return nil, err
	}
	over, at, err := overItem(items)
	if err != nil {
		return nil, err
	}
	overs := overAggs(items)
	if over != nil && len(overs) == 0 {
		// ROW_NUMBER() OVER w: rank over the WINDOW clause's window, in a copy of the item.
		if o := over.Expr.(*parser.OverExpr); o.Name != "" {
			if err := checkWindowDefs(q.Windows); err != nil {
				return nil, err
			}
			spec, err := overWindow(o, q.Windows)
			if err != nil {
				return nil, err
			}
			named := *o
			named.Name, named.WindowSpec = "", spec
			item := *over
			item.Expr = &named
			items = append([]*parser.SelectItem(nil), items...)
			items[at], over = &item, &item
		}
	}
	var out Node
	switch {
	case len(overs) > 0 && (hasAgg || over != nil):
		return nil, errorf(overs[0], "an aggregate OVER a window cannot share its SELECT with GROUP BY, other aggregates or ROW_NUMBER(): "+
			"compute them in a subquery")
	case len(overs) > 0:
		out, err = p.overAggregate(q, items, overs, input, b)
	case hasAgg && over != nil:
		return nil, errorf(over.Expr, "ROW_NUMBER() OVER cannot rank the groups of its own SELECT: "+
			"rank them in an enclosing query, SELECT *, ROW_NUMBER() OVER (...) AS rownum FROM (SELECT ... GROUP BY ...)")
	case hasAgg:
		out, err = p.aggregate(q, items, input, b)
	case over != nil:
		var ranked Node
		var rb *exprBinder
		if ranked, rb, err = p.rank(over, at, input, b); err == nil {
			out, err = project(items, ranked, rb)
		}
	default:
		out, err = project(items, input, b)
	}
	if err != nil {
		return nil, err
	}
	if q.Distinct {
		keys := make([]int, len(out.Schema()))
		for i := range keys {
			keys[i] = i
		}
		out = &Aggregate{Input: out, Keys: keys, Names: schemaNames(out.Schema())}
	}
	return out, nil
}

func (p *Planner) from(t parser.TableExpr, depth int) (Node, *scope, error) {
	switch t := t.(type) {
	case nil:
		return &Values{Rows: 1}, &scope{}, nil
	case *parser.TableName:
		if t.AsOf != nil {
			return nil, nil, errorf(t.AsOf, "FOR SYSTEM_TIME AS OF reads the table on the right of a JOIN: FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON ...")
		}
		if len(t.Hints) > 0 {
			_, isTable := p.Catalog.Table(t.Name)
			for _, c := range p.ctes {
				isTable = isTable && !equalFold(c.def.Name, t.Name)
			}
			if !isTable {
				return nil, nil, errorf(t.Hints[0], "table hints apply to tables, and %s is not one", t.Name)
			}
		}
		alias := t.Alias
		if alias == "" {
			alias = t.Name
		}
		for i := len(p.ctes) - 1; i >= 0; i-- {
			if c := p.ctes[i]; equalFold(c.def.Name, t.Name) {
				n, err := p.withScope(c.scope, func() (Node, error) {
					n, _, err := p.query(c.def.Query, depth+1)
					return n, err
				})
				if err != nil {
					return nil, nil, err
				}
				if len(c.def.Columns) > 0 {
					if len(c.def.Columns) != len(n.Schema()) {
						return nil, nil, errorf(c.def, "WITH %s names %d columns but its query produces %d", c.def.Name, len(c.def.Columns), len(n.Schema()))
					}
					n = rename(n, c.def.Columns)
				}
				return n, newScope(alias, n.Schema()), nil
			}
		}
		if tbl, ok := p.Catalog.Table(t.Name); ok {
			tbl, err := tableHints(tbl, t.Hints)
			if err != nil {
				return nil, nil, err
			}
			n := scanWithComputed(tbl)
			return n, newScope(alias, n.Schema()), nil
		}
		if v, ok := p.Catalog.View(t.Name); ok {
			// A view reads the catalog only, not the WITH queries around its use.
			n, err := p.withScope(nil, func() (Node, error) {
				n, _, err := p.query(v.Query, depth+1)
				return n, err
			})
			if err != nil {
				return nil, nil, errorf(t, "view %s: %v", v.Name, err)
			}
			inView(n, v.Name, t.Pos) // a fresh plan: noting where it is read changes no one's
			if len(v.Columns) > 0 {
				n = rename(n, v.Columns)
			}
			return n, newScope(alias, n.Schema()), nil
		}
		return nil, nil, errorf(t, "unknown table `%s`%s", t.Name, suggest(t.Name, p.Catalog.Names()))
	case *parser.WindowTable:
		return p.windowTable(t, depth)
	case *parser.MatchRecognize:
		return p.matchRecognize(t, depth)
	case *parser.JoinTable:
		return p.join(t, depth)
	case *parser.UnnestTable:
		return nil, nil, errorf(t, "UNNEST reads a column of the table on its left: FROM t CROSS JOIN UNNEST(t.col) AS u (x)")
	case *parser.SubqueryTable:
		n, _, err := p.query(t.Query, depth+1)
		if err != nil {
			return nil, nil, err
		}
		if t.Columns != nil {
			if len(t.Columns) != len(n.Schema()) {
				return nil, nil, errorf(t, "%s names %d columns but its query produces %d", t.Alias, len(t.Columns), len(n.Schema()))
			}
			n = rename(n, t.Columns)
		}
		return n, newScope(t.Alias, n.Schema()), nil
	}
	return nil, nil, errorf(t, "unsupported FROM clause %s", t)
}

// withScope runs plan with the given WITH queries in scope.
func (p *Planner) withScope(ctes []*cte, plan func() (Node, error)) (Node, error) {
	saved := p.ctes
	p.ctes = ctes
	defer func() { p.ctes = saved }()
	return plan()
}

// scanWithComputed reads a table and adds its computed columns, then its watermark.
func scanWithComputed(t *Table) Node {
	scan := &Scan{Table: t}
	phys := scan.Schema()
	computed := false
	for _, c := range t.Columns {
		// A metadata column of another type than its key's is cast.
		computed = computed || c.Computed != nil || (c.IsMetadata() && phys[phys.Index(c.Name)].Type != c.Type)
	}
	if !computed {
		return watermarked(t, scan)
	}
	proj := &Project{Input: scan}
	for _, c := range t.Columns {
		e := c.Computed
		if e == nil {
			i := phys.Index(c.Name)
			e = castTo(&ColumnRef{Index: i, Name: c.Name, T: phys[i].Type}, c.Type)
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Names = append(proj.Names, c.Name)
	}
	return watermarked(t, proj)
}

func rename(n Node, names []string) Node {
	return &Project{Input: n, Exprs: columnRefs(n.Schema()), Names: names}
}

func schemaNames(s Schema) []string {
	names := make([]string, len(s))
	for i, c := range s {
		names[i] = c.Name
	}
	return names
}

// expandStars replaces * and t.* with the columns they name.
func expandStars(items []*parser.SelectItem, sc *scope) ([]*parser.SelectItem, error) {
	var out []*parser.SelectItem
	taken := map[string]bool{} // names a star gave: a join's columns may repeat one
	for _, it := range items {
		if !it.Star {
			out = append(out, it)
			continue
		}
		found := false
		for _, c := range sc.cols {
			if it.Qualifier != "" && !equalFold(c.qual, it.Qualifier) {
				continue
			}
			found = true
			parts := []string{c.name}
			if c.qual != "" {
				parts = []string{c.qual, c.name}
			}
			item := &parser.SelectItem{Pos: it.Pos, Expr: &parser.Ident{Pos: it.Pos, Parts: parts}}
			for i := 0; taken[strings.ToLower(itemName(item, 0))]; i++ {
				item.Alias = fmt.Sprintf("%s%d", c.name, i)
			}
			taken[strings.ToLower(itemName(item, 0))] = true
			out = append(out, item)
		}
		if !found && it.Qualifier != "" {
			// r.* of a ROW column r: its fields, named as they are.
			for _, c := range sc.cols {
				if !equalFold(c.name, it.Qualifier) || c.typ.Kind != Row || found {
					continue
				}
				found = true
				for _, f := range c.typ.Fields() {
					parts := []string{c.name, f.Name}
					if c.qual != "" {
						parts = []string{c.qual, c.name, f.Name}
					}
					out = append(out, &parser.SelectItem{Pos: it.Pos, Expr: &parser.Ident{Pos: it.Pos, Parts: parts}, Alias: f.Name})
				}
			}
		}
		if !found {
			if it.Qualifier != "" {
				return nil, errorf(it, "unknown table, alias or ROW column `%s`", it.Qualifier)
			}
			return nil, errorf(it, "SELECT * needs a FROM clause")
		}
	}
	return out, nil
}

// itemName is the output name of a select item: its alias, its column name, or EXPR$i.
func itemName(it *parser.SelectItem, i int) string {
	if it.Alias != "" {
		return it.Alias
	}
	if id, ok := it.Expr.(*parser.Ident); ok {
		return id.Parts[len(id.Parts)-1]
	}
	return fmt.Sprintf("EXPR$%d", i)
}

func project(items []*parser.SelectItem, input Node, b *exprBinder) (Node, error) {
	proj := &Project{Input: input}
	for i, it := range items {
		e, err := b.bind(it.Expr)
		if err != nil {
			return nil, err
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Names = append(proj.Names, itemName(it, i))
	}
	if err := uniqueNames(items, proj.Names); err != nil {
		return nil, err
	}
	return proj, nil
}

// uniqueNames checks that a select list names each column once. A name the list did
// not choose (a column's, as in SELECT a.id, b.id) is numbered instead, id0, as in
// Flink; an alias taken twice is an error.
func uniqueNames(items []*parser.SelectItem, names []string) error {
	seen := map[string]bool{}
	for i, n := range names {
		if seen[strings.ToLower(n)] && items[i].Alias != "" {
			return errorf(items[i], "duplicate column name `%s` in SELECT; give it another alias", n)
		}
		for j := 0; seen[strings.ToLower(names[i])]; j++ {
			names[i] = fmt.Sprintf("%s%d", n, j)
		}
		seen[strings.ToLower(names[i])] = true
	}
	return nil
}

// aggregate plans a grouped SELECT: Project(keys, aggregate arguments) →
// Aggregate → Filter(HAVING) → Project(select list).
func (p *Planner) aggregate(q *parser.Query, items []*parser.SelectItem, input Node, b *exprBinder) (Node, error) {
	ab := &aggBinding{input: b}
	groupBy, sets, err := groupingSets(q.GroupBy)
	if err != nil {
		return nil, err
	}
	ab.sets = sets
	for _, g := range groupBy {
		if containsAgg(g) {
			return nil, errorf(g, "aggregate functions are not allowed in GROUP BY")
		}
		k, err := b.bind(g)
		if err != nil {
			return nil, err
		}
		ab.groupSQL = append(ab.groupSQL, g.String())
		ab.keys = append(ab.keys, k)
	}
	post := &exprBinder{agg: ab}
	var outExprs []Expr
	var outNames []string
	for i, it := range items {
		e, err := post.bind(it.Expr)
		if err != nil {
			return nil, err
		}
		outExprs = append(outExprs, e)
		outNames = append(outNames, itemName(it, i))
	}
	if err := uniqueNames(items, outNames); err != nil {
		return nil, err
	}
	var having Expr
	if q.Having != nil {
		h, err := post.bind(q.Having)
		if err != nil {
			return nil, err
		}
		if having, err = post.expect(q.Having, h, TypeBoolean); err != nil {
			return nil, errorf(q.Having, "HAVING needs a BOOLEAN condition, got %s", h.Type().Nullable())
		}
	}
	// Name the aggregate outputs after the select items that are exactly them.
	for i, e := range outExprs {
		if c, ok := e.(*ColumnRef); ok && c.Index >= ab.firstAgg() && strings.HasPrefix(ab.aggs[c.Index-ab.firstAgg()].name, "EXPR$") {
			ab.aggs[c.Index-ab.firstAgg()].name = outNames[i]
		}
	}
	pre := &Project{Input: input}
	agg := &Aggregate{}
	for i, k := range ab.keys {
		pre.Exprs = append(pre.Exprs, k)
		pre.Names = append(pre.Names, ab.keyName(i))
		agg.Keys = append(agg.Keys, i)
		agg.Names = append(agg.Names, ab.keyName(i))
	}
	if sets != nil {
		agg.Names = append(agg.Names, expandID)
	}
	for _, a := range ab.aggs {
		call := AggCall{Fn: a.fn, Arg: -1, Distinct: a.distinct, T: a.t, Separator: a.sep, KeepNulls: a.keepNulls}
		input := func(e Expr) int {
			// Calls over the same expression read one column (q16's eight DISTINCT counts
			// read bidder or auction and one of three filters), which the aggregate then
			// sees is the same; not a key's column, which grouping sets null out.
			if movable(e) {
				for i := len(ab.keys); i < len(pre.Exprs); i++ {
					if reflect.DeepEqual(pre.Exprs[i], e) {
						return i
					}
				}
			}
			pre.Exprs = append(pre.Exprs, e)
			pre.Names = append(pre.Names, fmt.Sprintf("$arg%d", len(pre.Exprs)-1))
			return len(pre.Exprs) - 1
		}
		if a.arg != nil {
			call.Arg = input(a.arg)
		}
		for _, m := range a.more {
			call.More = append(call.More, input(m))
		}
		if a.filter != nil {
			call.Filter = input(a.filter) + 1
		}
		agg.Aggs = append(agg.Aggs, call)
		agg.Names = append(agg.Names, a.name)
	}
	agg.Input = pre
	if sets != nil { // the set column is a key, after the others
		agg.Input = &Expand{Input: pre, Keys: len(ab.keys), Sets: sets}
		agg.Keys = append(agg.Keys, len(pre.Exprs))
	}
	// GROUP BY window_start, window_end of a window function, or of a window aggregate
	// below (cascading windows): a window aggregate.
	starts, ends, times := map[*WindowTVF]int{}, map[*WindowTVF]int{}, map[*WindowTVF]int{}
	for i, k := range ab.keys {
		if c, ok := k.(*ColumnRef); ok {
			switch w, col := finalWindowOf(input, c.Index); col {
			case "window_start":
				starts[w] = i
			case "window_end":
				ends[w] = i
			case "window_time":
				times[w] = i
			}
		}
	}
	for w, end := range ends {
		if start, ok := starts[w]; ok {
			if err := windowInEverySet(w, sets, start, end); err != nil {
				return nil, errorf(q, "%v", err)
			}
			timeKey, ok := times[w]
			if !ok {
				timeKey = -1
			}
			if err := sessionKeys(w, agg, start, end, timeKey); err != nil {
				return nil, errorf(q, "%v", err)
			}
			agg.Window, agg.WindowStart, agg.WindowEnd = w, start, end
			if p.Emit.On() && w.Kind == "SESSION" {
				return nil, errorf(q, "the table.exec.emit options do not apply to SESSION windows")
			}
			agg.Emit = p.Emit
		}
	}
	var n Node = agg
	if having != nil {
		n = &Filter{Input: n, Cond: refreshRefs(having, agg.Schema())}
	}
	for i := range outExprs {
		outExprs[i] = refreshRefs(outExprs[i], agg.Schema())
	}
	return &Project{Input: n, Exprs: outExprs, Names: outNames}, nil
}

// refreshRefs renames column references after the aggregate's output names settled.
func refreshRefs(e Expr, s Schema) Expr {
	return mapColumns(e, func(c *ColumnRef) Expr { return &ColumnRef{Index: c.Index, Name: s[c.Index].Name, T: c.T} })
}

// multisetIntoMap reports whether a MULTISET<T> is written to a MAP<T, INT> column: the
// map of element to count it is held as. COLLECT was typed so before MULTISET was a
// type of its own, and scripts that insert it into such a column keep running (Flink
// refuses them).
func multisetIntoMap(from, to Type) bool {
	return from.Kind == Multiset && to.Kind == Map && to.Value().Kind == Int &&
		from.Elem().Nullable() == to.Elem().Nullable()
}
