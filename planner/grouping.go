package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// Expand emits each input row once per grouping set of GROUPING SETS, ROLLUP or CUBE:
// the first Keys input columns are the grouping keys; in the copy for set s, the keys
// Sets[s] does not keep are NULL, and a last column, $e, holds s. The aggregate above
// groups by the keys and $e, so each set's groups are apart even where a key's NULL is
// the same as a dropped key's. Expand keeps no state: a retraction is expanded like the
// row it retracts.
type Expand struct {
	Input Node
	Keys  int
	Sets  [][]bool // by set, by key: whether the set keeps the key
}

// expandID names Expand's set column.
const expandID = "$e"

func (n *Expand) Schema() Schema {
	in := n.Input.Schema()
	s := make(Schema, 0, len(in)+1)
	for i, c := range in {
		if i < n.Keys && n.drops(i) {
			c.Type = c.Type.Nullable()
		}
		s = append(s, c)
	}
	return append(s, Column{Name: expandID, Type: Type{Kind: BigInt, NotNull: true}})
}

// drops reports whether some set drops key k.
func (n *Expand) drops(k int) bool {
	for _, set := range n.Sets {
		if !set[k] {
			return true
		}
	}
	return false
}

func (n *Expand) Children() []Node { return []Node{n.Input} }
func (n *Expand) Updating() bool   { return n.Input.Updating() }

func (n *Expand) Describe() string {
	in := n.Input.Schema()
	sets := make([]string, len(n.Sets))
	for s, set := range n.Sets {
		var keys []string
		for k, keep := range set {
			if keep {
				keys = append(keys, in[k].Name)
			}
		}
		sets[s] = "{" + strings.Join(keys, ", ") + "}"
	}
	return fmt.Sprintf("Expand(groupingSets=[%s], id=[%s])", strings.Join(sets, ", "), expandID)
}

// maxGroupingSets bounds how many grouping sets a GROUP BY may expand to: each input
// row is copied once per set.
const maxGroupingSets = 4096

// groupingSets reads a GROUP BY list: its distinct grouping expressions, and, when it has
// GROUPING SETS, ROLLUP, CUBE or (), the sets of them it groups by (by set, by
// expression: whether the set keeps it). Plain expressions beside grouping elements are
// in every set; several grouping elements multiply (their cross product), as in SQL.
// sets is nil for a GROUP BY of plain expressions only.
func groupingSets(items []parser.Expr) (exprs []parser.Expr, sets [][]bool, err error) {
	index := map[string]int{}
	key := func(e parser.Expr) int {
		sql := e.String()
		if i, ok := index[sql]; ok {
			return i
		}
		index[sql] = len(exprs)
		exprs = append(exprs, e)
		return len(exprs) - 1
	}
	has := false
	product := [][]int{{}} // sets as lists of expression indices
	for _, item := range items {
		var itemSets [][]int
		if g, ok := item.(*parser.GroupingSets); ok {
			has = true
			if itemSets, err = elementSets(g, key); err != nil {
				return nil, nil, err
			}
		} else {
			itemSets = [][]int{{key(item)}}
		}
		if len(product)*len(itemSets) > maxGroupingSets {
			return nil, nil, errorf(item, "GROUP BY expands to more than %d grouping sets", maxGroupingSets)
		}
		var next [][]int
		for _, p := range product {
			for _, s := range itemSets {
				next = append(next, append(append([]int(nil), p...), s...))
			}
		}
		product = next
	}
	if !has {
		return exprs, nil, nil
	}
	for _, p := range product {
		set := make([]bool, len(exprs))
		for _, k := range p {
			set[k] = true
		}
		sets = append(sets, set)
	}
	return exprs, sets, nil
}

// elementSets expands one grouping element into its sets, as lists of expression
// indices (key gives an expression's).
func elementSets(g *parser.GroupingSets, key func(parser.Expr) int) ([][]int, error) {
	elems := make([][]int, len(g.Elems))
	for i, e := range g.Elems {
		for _, x := range e {
			if _, ok := x.(*parser.GroupingSets); ok {
				continue
			}
			if containsAgg(x) {
				return nil, errorf(x, "aggregate functions are not allowed in GROUP BY")
			}
			elems[i] = append(elems[i], key(x))
		}
	}
	switch g.Kind {
	case "":
		return [][]int{{}}, nil
	case "ROLLUP": // (a, b, c), (a, b), (a), ()
		sets := make([][]int, 0, len(elems)+1)
		for n := len(elems); n >= 0; n-- {
			var set []int
			for _, e := range elems[:n] {
				set = append(set, e...)
			}
			sets = append(sets, set)
		}
		return sets, nil
	case "CUBE": // every subset, the whole first
		if len(elems) > 12 {
			return nil, errorf(g, "CUBE takes at most 12 elements, got %d", len(elems))
		}
		var sets [][]int
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var set []int
			for i, e := range elems {
				if mask&(1<<(len(elems)-1-i)) != 0 {
					set = append(set, e...)
				}
			}
			sets = append(sets, set)
		}
		return sets, nil
	}
	var sets [][]int // GROUPING SETS
	for i, e := range g.Elems {
		if len(e) == 1 {
			if nested, ok := e[0].(*parser.GroupingSets); ok {
				more, err := elementSets(nested, key)
				if err != nil {
					return nil, err
				}
				sets = append(sets, more...)
				continue
			}
		}
		sets = append(sets, elems[i])
	}
	if len(sets) > maxGroupingSets {
		return nil, errorf(g, "GROUP BY expands to more than %d grouping sets", maxGroupingSets)
	}
	return sets, nil
}

// isGroupingCall reports whether e is GROUPING(...) or GROUPING_ID(...).
func isGroupingCall(e parser.Expr) bool {
	f, ok := e.(*parser.FuncCall)
	return ok && (f.Name == "GROUPING" || f.Name == "GROUPING_ID")
}

// grouping binds GROUPING(a, ...) or GROUPING_ID(a, ...) above a GROUP BY: a BIGINT
// whose bits are, from the most significant, 1 where an argument is not grouped in the
// row's grouping set (GROUPING(a) is 1 in the rows where a was rolled up). Without grouping
// sets, every argument is grouped: 0.
func (a *aggBinding) grouping(f *parser.FuncCall) (Expr, error) {
	if f.Star || f.Distinct || len(f.Args) == 0 {
		return nil, errorf(f, "%s takes one or more grouping expressions", f.Name)
	}
	if len(f.Args) > 63 {
		return nil, errorf(f, "%s takes at most 63 arguments", f.Name)
	}
	keys := make([]int, len(f.Args))
	for i, arg := range f.Args {
		keys[i] = -1
		sql := arg.String()
		for k, g := range a.groupSQL {
			if g == sql {
				keys[i] = k
			}
		}
		if keys[i] < 0 {
			return nil, errorf(arg, "the argument of %s must be a GROUP BY expression, not %s", f.Name, sql)
		}
	}
	t := Type{Kind: BigInt, NotNull: true}
	id := func(set []bool) int64 {
		var v int64
		for _, k := range keys {
			v <<= 1
			if set != nil && !set[k] {
				v |= 1
			}
		}
		return v
	}
	if a.sets == nil {
		return &Literal{Value: id(nil), T: t}, nil
	}
	setCol := &ColumnRef{Index: len(a.keys), Name: expandID, T: t}
	var c Case
	c.T = t
	for s, set := range a.sets {
		v := &Literal{Value: id(set), T: t}
		if s == len(a.sets)-1 {
			c.Else = v
			break
		}
		c.Whens = append(c.Whens, When{Cond: &Call{Fn: FnEq, Args: []Expr{setCol, &Literal{Value: int64(s), T: t}}, T: Type{Kind: Boolean, NotNull: true}}, Result: v})
	}
	if len(c.Whens) == 0 {
		return c.Else, nil
	}
	return &c, nil
}

// keyType is the type of key column i above the aggregate: nullable where a grouping
// set drops the key.
func (a *aggBinding) keyType(i int) Type {
	t := a.keys[i].Type()
	for _, set := range a.sets {
		if !set[i] {
			return t.Nullable()
		}
	}
	return t
}

// windowInEverySet checks that the grouping sets of a window aggregate over w all keep
// its window_start and window_end (keys start and end): GROUP BY window_start,
// window_end, GROUPING SETS (...).
func windowInEverySet(w *WindowTVF, sets [][]bool, start, end int) error {
	if sets == nil {
		return nil
	}
	if w.Kind == "SESSION" {
		return fmt.Errorf("GROUPING SETS, ROLLUP and CUBE do not apply to SESSION windows")
	}
	for _, set := range sets {
		if !set[start] || !set[end] {
			return fmt.Errorf("a window aggregate keeps window_start and window_end in every grouping set: GROUP BY window_start, window_end, GROUPING SETS (...)")
		}
	}
	return nil
}
