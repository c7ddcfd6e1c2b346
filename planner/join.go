package planner

import (
	"fmt"
	"math"
	"strings"
)

// Join combines the rows of Left and Right whose keys are equal (LeftKeys[i] =
// RightKeys[i]) and for which Residual holds. Its output is Left's columns, then Right's;
// an outer join pads the rows of its outer side that match nothing with NULLs.
//
// It runs in one of three ways:
//   - a regular join keeps both inputs in state, and its result is updating, with
//     retractions, unless it is an INNER join of insert-only inputs;
//   - an interval join (Interval set) joins rows whose event times are within bounds of
//     each other, and forgets a row once the watermark says nothing more can match it
//     (an inner join bounded by a window's end forgets the other side's rows only);
//   - a window join (Window set) joins the rows of the same window, whose window_start
//     and window_end are among the keys, and forgets them when the window closes.
//
// Interval and window joins read insert-only inputs and emit insert-only results.
type Join struct {
	Left, Right         Node
	Kind                string // INNER, LEFT, RIGHT, FULL, SEMI or ANTI
	LeftKeys, RightKeys []int
	Residual            Expr // over Left's columns then Right's, or nil
	Interval            *Interval
	Window              *WindowTVF
	// LeftTime and RightTime are the event-time columns of an interval join, and the
	// window_end columns of a window join.
	LeftTime, RightTime int
	// Scalar, when set, is the SQL of a scalar subquery, the right side, whose second
	// row fails the job.
	Scalar string
}

// Semi reports whether the join is a semi or anti join, whose output is the left rows
// that have a match (SEMI) or none (ANTI), once each, as in Flink's IN, EXISTS, NOT IN
// and NOT EXISTS.
func (n *Join) Semi() bool { return n.Kind == "SEMI" || n.Kind == "ANTI" }

// Interval bounds an interval join: a pair matches when Lower <= left time - right
// time <= Upper, in milliseconds; math.MinInt64 and math.MaxInt64 bound nothing. Kept
// marks a side whose rows never expire (see timeJoin): each side's do in a Flink
// interval join.
type Interval struct {
	Lower, Upper int64
	Kept         [2]bool
}

// Outer reports whether the join pads unmatched rows of the left or right side.
func (n *Join) Outer(side int) bool {
	if side == 0 {
		return n.Kind == "LEFT" || n.Kind == "FULL"
	}
	return n.Kind == "RIGHT" || n.Kind == "FULL"
}

// Schema is the left columns, then the right ones; a column name taken by an earlier
// column gets a number (id, id0), as in Flink, and an outer join's padded side becomes
// nullable.
func (n *Join) Schema() Schema {
	if n.Semi() {
		return append(Schema(nil), n.Left.Schema()...)
	}
	var s Schema
	taken := map[string]bool{}
	for side, in := range []Node{n.Left, n.Right} {
		padded := n.Outer(1 - side)
		for _, c := range in.Schema() {
			name := c.Name
			for i := 0; taken[strings.ToLower(name)]; i++ {
				name = fmt.Sprintf("%s%d", c.Name, i)
			}
			taken[strings.ToLower(name)] = true
			if padded {
				c.Type.NotNull = false
			}
			s = append(s, Column{Name: name, Type: c.Type})
		}
	}
	return s
}

func (n *Join) Children() []Node { return []Node{n.Left, n.Right} }

func (n *Join) Updating() bool {
	if n.Interval != nil || n.Window != nil {
		return false
	}
	if n.Kind == "SEMI" {
		// Over insert-only inputs a left row passes once, on its first match, for good.
		return n.Left.Updating() || n.Right.Updating()
	}
	return n.Kind != "INNER" || n.Left.Updating() || n.Right.Updating()
}

func (n *Join) Describe() string {
	pairs := *n
	pairs.Kind = "INNER" // a semi join's condition reads both sides' columns, named as an inner join's
	joined := pairs.Schema()
	left := len(n.Left.Schema())
	var conds []string
	for i, l := range n.LeftKeys {
		conds = append(conds, fmt.Sprintf("%s = %s", joined[l].Name, joined[left+n.RightKeys[i]].Name))
	}
	name := "Join"
	switch {
	case n.Interval != nil:
		name = "IntervalJoin"
		conds = append(conds, n.Interval.describe(joined[n.LeftTime].Name, joined[left+n.RightTime].Name))
	case n.Window != nil:
		name = "WindowJoin"
	}
	if n.Residual != nil {
		conds = append(conds, exprSQL(n.Residual, joined))
	}
	more := ""
	if n.Scalar != "" {
		more = ", scalar=[" + n.Scalar + "]"
	}
	if n.Interval != nil && n.Interval.Kept != [2]bool{} {
		expiring := "left"
		if n.Interval.Kept[0] {
			expiring = "right"
		}
		more = ", expires=[" + expiring + "]"
	}
	return fmt.Sprintf("%s(joinType=[%s], where=[%s]%s)", name, n.Kind, strings.Join(conds, " AND "), more)
}

// describe is the interval's condition on the time columns lt and rt.
func (iv *Interval) describe(lt, rt string) string {
	switch {
	case iv.Lower == math.MinInt64:
		return fmt.Sprintf("%s - %s <= %s", lt, rt, signedDuration(iv.Upper))
	case iv.Upper == math.MaxInt64:
		return fmt.Sprintf("%s - %s >= %s", lt, rt, signedDuration(iv.Lower))
	}
	return fmt.Sprintf("%s - %s BETWEEN %s AND %s", lt, rt, signedDuration(iv.Lower), signedDuration(iv.Upper))
}

func signedDuration(ms int64) string {
	if ms < 0 {
		return "-" + duration(-ms)
	}
	return duration(ms)
}
