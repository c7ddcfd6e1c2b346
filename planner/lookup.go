package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// LookupJoin joins each row of Input, as it is processed, with the rows of Table whose
// columns RightKeys equal the row's LeftKeys: Flink's lookup join, `JOIN t FOR
// SYSTEM_TIME AS OF o.proc AS c ON ...` with proc a processing-time attribute. The
// table is not read as a stream: the operator asks its connector for the keys of each
// batch (with a cache, by the table's lookup options). Its output is Input's columns,
// then the table's physical columns; a LEFT join pads a row that matches nothing with
// NULLs. It keeps no state in checkpoints: a row joins what the table holds when it
// is processed, again on a replay.
type LookupJoin struct {
	Input Node
	Table *Table
	Kind  string // INNER or LEFT
	// LeftKeys are expressions over Input's columns, each of the type of the table's
	// column RightKeys[i] (an index into the table's physical schema).
	LeftKeys  []Expr
	RightKeys []int
	Residual  Expr // over Input's columns then the table's, or nil
}

// Lookup options of a table, as Flink names them. A table of any connector accepts
// them; they act where the table is looked up.
const (
	LookupCache              = "lookup.cache"
	LookupMaxRows            = "lookup.partial-cache.max-rows"
	LookupExpireAfterWrite   = "lookup.partial-cache.expire-after-write"
	LookupExpireAfterAccess  = "lookup.partial-cache.expire-after-access"
	LookupCacheMissingKey    = "lookup.partial-cache.cache-missing-key"
	LookupMaxRetries         = "lookup.max-retries"
	LookupReloadTTL          = "lookup.join.cache.ttl" // a filesystem table's reload interval, as Flink's Hive and filesystem lookup name it
	LookupReloadTTLShortName = "lookup.cache.ttl"
)

// IsLookupOption reports whether key is one of the lookup options above, which the
// engine reads, not the table's connector.
func IsLookupOption(key string) bool {
	switch strings.ToLower(key) {
	case LookupCache, LookupMaxRows, LookupExpireAfterWrite, LookupExpireAfterAccess, LookupCacheMissingKey,
		LookupMaxRetries, LookupReloadTTL, LookupReloadTTLShortName:
		return true
	}
	return false
}

func (n *LookupJoin) Outer() bool { return n.Kind == "LEFT" }

// Schema is Input's columns, then the table's; a name taken by an earlier column gets a
// number (id, id0), as in Join.
func (n *LookupJoin) Schema() Schema {
	var s Schema
	taken := map[string]bool{}
	for side, cols := range []Schema{n.Input.Schema(), n.Table.PhysicalSchema()} {
		for _, c := range cols {
			name := c.Name
			for i := 0; taken[strings.ToLower(name)]; i++ {
				name = fmt.Sprintf("%s%d", c.Name, i)
			}
			taken[strings.ToLower(name)] = true
			if side == 1 && n.Outer() {
				c.Type.NotNull = false
			}
			s = append(s, Column{Name: name, Type: c.Type})
		}
	}
	return s
}

func (n *LookupJoin) Children() []Node { return []Node{n.Input} }
func (n *LookupJoin) Updating() bool   { return n.Input.Updating() }

func (n *LookupJoin) Describe() string {
	in := n.Input.Schema()
	joined := n.Schema()
	phys := n.Table.PhysicalSchema()
	var keys []string
	for i, k := range n.LeftKeys {
		keys = append(keys, fmt.Sprintf("%s=%s", phys[n.RightKeys[i]].Name, exprSQL(k, in)))
	}
	kind := map[string]string{"INNER": "InnerJoin", "LEFT": "LeftOuterJoin"}[n.Kind]
	s := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]", n.Table.Name, kind, strings.Join(keys, ", "))
	if n.Residual != nil {
		s += ", where=[" + exprSQL(n.Residual, joined) + "]"
	}
	return s + ")"
}

// systemTimeJoin plans `left JOIN t FOR SYSTEM_TIME AS OF left.time ON ...`. AS OF a
// processing-time attribute makes a lookup join; AS OF a rowtime, an event-time
// temporal join against a versioned table.
func (p *Planner) systemTimeJoin(t *parser.JoinTable, right *parser.TableName, depth int) (Node, *scope, error) {
	left, lsc, err := p.from(t.Left, depth)
	if err != nil {
		return nil, nil, err
	}
	at, err := (&exprBinder{sc: lsc}).bind(right.AsOf)
	if err != nil {
		return nil, nil, err
	}
	col, isCol := at.(*ColumnRef)
	switch {
	case isCol && rowtime(left, col.Index) && !proctime(left, col.Index):
		return p.temporalJoin(t, right, depth, left, lsc, col) // an event-time temporal join
	case !isCol || !proctime(left, col.Index):
		return nil, nil, errorf(right.AsOf, "Temporal table join currently only supports 'FOR SYSTEM_TIME AS OF' left table's time attribute field: "+
			"%s is none (a column with a WATERMARK, or one AS PROCTIME())", right.AsOf)
	}
	return p.lookupJoin(t, right, left, lsc)
}

// lookupJoin plans a join AS OF a processing-time attribute: a lookup join.
func (p *Planner) lookupJoin(t *parser.JoinTable, right *parser.TableName, left Node, lsc *scope) (Node, *scope, error) {
	if t.Kind != "INNER" && t.Kind != "LEFT" {
		return nil, nil, errorf(right, "a lookup join (FOR SYSTEM_TIME AS OF a processing-time attribute) is an INNER or LEFT join, not %s", t.Kind)
	}
	if t.On == nil {
		return nil, nil, errorf(right, "a lookup join needs ON with an equality on a column of %s", right.Name)
	}
	tbl, ok := p.Catalog.Table(right.Name)
	if !ok || p.isCTE(right.Name) {
		if _, isView := p.Catalog.View(right.Name); isView || p.isCTE(right.Name) {
			return nil, nil, errorf(right, "FOR SYSTEM_TIME AS OF a processing-time attribute looks up a table, and %s is a view", right.Name)
		}
		return nil, nil, errorf(right, "unknown table `%s`%s", right.Name, suggest(right.Name, p.Catalog.Names()))
	}
	tbl, err := tableHints(tbl, right.Hints)
	if err != nil {
		return nil, nil, err
	}
	// A changelog table (a debezium-json file) is looked up by nothing: its records are
	// changes, not rows, and Flink refuses it so.
	if (p.CanLookup != nil && !p.CanLookup(tbl)) || tbl.Changelog() {
		if (len(tbl.PrimaryKey) > 0 && tbl.Watermark != nil) || tbl.Changelog() {
			return nil, nil, errorf(right, "Processing-time temporal join is not supported yet.")
		}
		return nil, nil, errorf(right, "table %s cannot be looked up: its connector '%s' is no lookup source "+
			"(a lookup join reads a table of connector 'jdbc', 'postgres', 'embedded' or 'filesystem')", tbl.Name, tbl.Connector())
	}
	for _, c := range tbl.Columns {
		if c.Computed != nil {
			return nil, nil, errorf(right, "a lookup join reads the physical columns of %s, which has the computed column %s: not supported yet", tbl.Name, c.Name)
		}
	}
	alias := right.Alias
	if alias == "" {
		alias = right.Name
	}
	phys := tbl.PhysicalSchema()
	rsc := newScope(alias, phys)
	sc := &scope{cols: append(append([]scopeCol(nil), lsc.cols...), rsc.cols...)}
	b := &exprBinder{sc: sc}
	cond, err := b.bind(t.On)
	if err != nil {
		return nil, nil, err
	}
	if cond, err = b.expect(t.On, cond, TypeBoolean); err != nil {
		return nil, nil, errorf(t.On, "JOIN ... ON needs a BOOLEAN condition, got %s", cond.Type().Nullable())
	}
	nl := len(left.Schema())
	n := &LookupJoin{Input: left, Table: tbl, Kind: t.Kind}
	var residual []Expr
	for _, c := range conjuncts(cond) {
		if l, r, ok := lookupKey(c, nl); ok {
			n.LeftKeys, n.RightKeys = append(n.LeftKeys, castTo(l, phys[r-nl].Type)), append(n.RightKeys, r-nl)
			continue
		}
		residual = append(residual, c)
	}
	if len(n.LeftKeys) == 0 {
		return nil, nil, errorf(t.On, "Temporal table join requires an equality condition on fields of table [%s]: "+
			"ON needs column = expression, with the column of %s and the expression over the other tables", tbl.Name, alias)
	}
	if len(residual) > 0 {
		n.Residual = and(residual)
	}
	if n.Outer() {
		for i := nl; i < len(sc.cols); i++ {
			sc.cols[i].typ.NotNull = false
		}
	}
	return n, sc, nil
}

// lookupKey recognises lookup column = expression over the left columns (either way
// round), where the two types compare without a cast on the lookup column.
func lookupKey(e Expr, nl int) (left Expr, right int, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || c.Fn != FnEq {
		return nil, 0, false
	}
	for i, a := range c.Args {
		col, isCol := a.(*ColumnRef)
		other := c.Args[1-i]
		if !isCol || col.Index < nl || !onlyBelow(other, nl) {
			continue
		}
		if !lookupComparable(other.Type(), col.T) {
			return nil, 0, false
		}
		return other, col.Index, true
	}
	return nil, 0, false
}

// lookupComparable: a key of type from can be looked up in a column of type to.
func lookupComparable(from, to Type) bool {
	switch {
	case from.Kind == to.Kind:
		return true
	case from.IsNumeric() && to.IsNumeric() && !isNarrow(from) && !isNarrow(to):
		return widened(from).Kind != Double && widened(to).Kind != Double && from.Kind != Decimal && to.Kind != Decimal
	}
	return false
}

// onlyBelow reports whether e reads only columns before nl: the left side of a
// lookup key.
func onlyBelow(e Expr, nl int) bool {
	ok := true
	walkColumns(e, func(c *ColumnRef) {
		if c.Index >= nl {
			ok = false
		}
	})
	return ok
}

// proctime says whether column i of n is a processing-time attribute: a PROCTIME()
// column of a table or of a query's SELECT, passed through projections and filters.
func proctime(n Node, i int) bool {
	switch n := n.(type) {
	case *WatermarkAssigner:
		if n.Proctime && i == n.TimeCol {
			return true
		}
		return proctime(n.Input, i)
	case *Project:
		switch e := n.Exprs[i].(type) {
		case *Call:
			return e.Fn == FnProctime
		case *ColumnRef:
			return proctime(n.Input, e.Index)
		}
	case *Filter:
		return proctime(n.Input, i)
	case *LookupJoin:
		return i < len(n.Input.Schema()) && proctime(n.Input, i)
	case *TemporalJoin:
		return i < len(n.Left.Schema()) && proctime(n.Left, i)
	case *MatchRecognize:
		if k := i - len(n.PartitionBy); k >= 0 {
			call, ok := n.Measures[k].(*Call)
			return ok && call.Fn == FnProctime // MATCH_PROCTIME()
		}
	}
	return false
}

// proctimeWatermarked makes column i of n, a processing-time attribute in an
// event-time stream (or in a query's SELECT), the time attribute of what reads it: a
// WatermarkAssigner whose watermark follows the clock replaces the stream's event-time
// one, so the windows over i close on the clock.
func proctimeWatermarked(n Node, i int) Node {
	c := n.Schema()[i]
	return &WatermarkAssigner{Input: n, TimeCol: i, Expr: &ColumnRef{Index: i, Name: c.Name, T: c.Type}, SQL: "PROCTIME()", Proctime: true}
}
