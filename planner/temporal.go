package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// TemporalJoin is an event-time temporal join, `left JOIN right FOR SYSTEM_TIME AS OF
// left.rowtime ON ...`: each left row joins the version of its key in Right (a
// versioned table, whose rows are versions of their primary key from their event time
// on) that was valid at the left row's time: the latest version at or before it, unless
// that one is a deletion. LeftKeys pair with Right's primary key (RightKeys); other
// conditions are the Residual, applied to the left row and its version. A left row is
// emitted once the watermark passes its time; a LEFT join pads a row without a valid
// version (or whose version fails the Residual) with NULLs.
//
// Its output is the left columns, then the right ones, insert-only; the left's time
// attribute stays one.
type TemporalJoin struct {
	Left, Right         Node
	Kind                string // INNER or LEFT
	LeftKeys, RightKeys []int
	Residual            Expr // over Left's columns then Right's, or nil
	// LeftTime is the left's rowtime column (AS OF), RightTime the right's.
	LeftTime, RightTime int
}

func (n *TemporalJoin) join() *Join { return &Join{Left: n.Left, Right: n.Right, Kind: n.Kind} }

// Schema is a join's: the left columns, then the right ones (nullable for LEFT).
func (n *TemporalJoin) Schema() Schema   { return n.join().Schema() }
func (n *TemporalJoin) Children() []Node { return []Node{n.Left, n.Right} }
func (n *TemporalJoin) Updating() bool   { return false }

func (n *TemporalJoin) Describe() string {
	inner := &Join{Left: n.Left, Right: n.Right, Kind: "INNER"}
	joined := inner.Schema()
	left := len(n.Left.Schema())
	var conds []string
	for i, l := range n.LeftKeys {
		conds = append(conds, fmt.Sprintf("%s = %s", joined[l].Name, joined[left+n.RightKeys[i]].Name))
	}
	if n.Residual != nil {
		conds = append(conds, exprSQL(n.Residual, joined))
	}
	return fmt.Sprintf("TemporalJoin(joinType=[%s], asOf=[%s], version=[%s], where=[%s])", n.Kind,
		joined[n.LeftTime].Name, joined[left+n.RightTime].Name, strings.Join(conds, " AND "))
}

// temporalJoin plans `left [LEFT] JOIN versioned FOR SYSTEM_TIME AS OF left.time ON ...`
// when the AS OF names the left side's event-time attribute, column ref of left (see
// systemTimeJoin).
func (p *Planner) temporalJoin(t *parser.JoinTable, right *parser.TableName, depth int, left Node, lsc *scope, ref *ColumnRef) (Node, *scope, error) {
	if t.Kind != "INNER" && t.Kind != "LEFT" {
		return nil, nil, errorf(t, "a temporal join is an INNER or a LEFT join, not a %s JOIN", t.Kind)
	}
	if t.On == nil {
		return nil, nil, errorf(right, "a temporal join needs an ON condition equating the primary key of %s with the left side", right.Name)
	}
	if readsChanges(left) {
		return nil, nil, errorf(t, "the left side of a temporal join must be insert-only, and it is updating")
	}
	plain := *right
	plain.AsOf = nil
	rnode, rsc, err := p.from(&plain, depth)
	if err != nil {
		return nil, nil, err
	}
	rnode, pk, err := p.versioned(right, rnode)
	if err != nil {
		return nil, nil, err
	}
	rtime := -1
	for i := range rnode.Schema() {
		if rtime < 0 && rowtime(rnode, i) && !proctime(rnode, i) {
			rtime = i
		}
	}
	if rtime < 0 {
		return nil, nil, errorf(right, "the versioned table of a temporal join needs an event-time attribute: %s declares no WATERMARK", right.Name)
	}

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
	n := &TemporalJoin{Left: left, Right: rnode, Kind: t.Kind, LeftTime: ref.Index, RightTime: rtime}
	paired := map[int]bool{}
	var residual []Expr
	for _, c := range conjuncts(cond) {
		if l, r, ok := equiKey(c, nl); ok && isIn(r-nl, pk) && !paired[r-nl] {
			paired[r-nl] = true
			n.LeftKeys, n.RightKeys = append(n.LeftKeys, l), append(n.RightKeys, r-nl)
			continue
		}
		residual = append(residual, c)
	}
	var missing []string
	for _, k := range pk {
		if !paired[k] {
			missing = append(missing, rnode.Schema()[k].Name)
		}
	}
	if len(missing) > 0 {
		return nil, nil, errorf(t.On, "the ON condition of a temporal join must equate the whole primary key of %s with columns of the left side, and %s is not",
			right.Name, strings.Join(missing, ", "))
	}
	if len(residual) > 0 {
		n.Residual = and(residual)
	}
	if t.Kind == "LEFT" {
		for i := nl; i < len(sc.cols); i++ {
			sc.cols[i].typ.NotNull = false
		}
	}
	return n, sc, nil
}

// versioned returns the versions of a temporal join's right side, and their primary key:
// a table's rows, keyed by its PRIMARY KEY, or, for a view that deduplicates keeping the
// last row of each key by event time, the rows the view deduplicates, keyed by its
// PARTITION BY columns (every row is a version of its key from its time on).
func (p *Planner) versioned(at *parser.TableName, n Node) (Node, []int, error) {
	if v, keys, ok := lastRowView(n); ok {
		return v, keys, nil
	}
	if tbl, ok := p.Catalog.Table(at.Name); ok && len(tbl.PrimaryKey) > 0 {
		var pk []int
		for _, name := range tbl.PrimaryKey {
			i := n.Schema().Index(name)
			if i < 0 {
				return nil, nil, errorf(at, "the primary key column %s of %s is not among its columns", name, at.Name)
			}
			pk = append(pk, i)
		}
		return n, pk, nil
	}
	return nil, nil, errorf(at, "Temporal Table Join requires primary key in versioned table, but no primary key can be found: "+
		"declare PRIMARY KEY (...) NOT ENFORCED on %s, or read a view that keeps the last row of each key", at.Name)
}

// lastRowView recognises a deduplication keeping each key's last row by event time,
// under projections that pick its columns (not its row number): it returns those picks
// over the rows it deduplicates, and the key's columns among them.
func lastRowView(n Node) (Node, []int, bool) {
	schema := n.Schema()
	picks := make([]int, len(schema)) // n's columns, as columns of the node below
	for i := range picks {
		picks[i] = i
	}
	for {
		p, ok := n.(*Project)
		if !ok {
			break
		}
		for i, c := range picks {
			ref, isRef := p.Exprs[c].(*ColumnRef)
			if !isRef {
				return nil, nil, false
			}
			picks[i] = ref.Index
		}
		n = p.Input
	}
	r, ok := n.(*Rank)
	// Dedup's test, but for the row number, which the plan drops later when nothing
	// above reads it.
	if !ok || r.Window != nil || r.Start != 1 || r.End != 1 || len(r.OrderBy) != 1 || !r.OrderBy[0].Desc ||
		readsChanges(r.Input) || !rowtime(r.Input, r.OrderBy[0].Col) || len(r.PartitionBy) == 0 {
		return nil, nil, false
	}
	in := r.Input.Schema()
	proj := &Project{Input: r.Input}
	for i, c := range picks {
		if c >= len(in) {
			return nil, nil, false // the row number is a column of the view
		}
		proj.Exprs = append(proj.Exprs, &ColumnRef{Index: c, Name: in[c].Name, T: in[c].Type})
		proj.Names = append(proj.Names, schema[i].Name)
	}
	var keys []int
	for _, k := range r.PartitionBy {
		at := slices.Index(picks, k)
		if at < 0 {
			return nil, nil, false // the key is projected away
		}
		keys = append(keys, at)
	}
	return proj, keys, true
}

// readsChanges reports whether n's rows may hold retractions: it is updating, or it
// passes on an updating input (a WatermarkAssigner over a changelog source reports
// itself insert-only).
func readsChanges(n Node) bool {
	if n.Updating() {
		return true
	}
	switch n := n.(type) {
	case *WatermarkAssigner, *Project, *Filter:
		return readsChanges(n.Children()[0])
	}
	return false
}

func isIn(i int, set []int) bool {
	for _, x := range set {
		if x == i {
			return true
		}
	}
	return false
}
