package ops

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// unnest emits each input row once per element of its ARRAY, MAP or MULTISET column (a
// multiset's element as often as it occurs), in order, so that an updating input's
// retractions stay before the rows that replace them.
type unnest struct {
	mem        memory.Allocator
	schema     *arrow.Schema
	col        int
	fields     bool // each element is a ROW, or a MAP entry: its fields are columns
	multiset   bool // the column is a MULTISET: a map of element to count
	outer      bool
	ordinality bool
	out        exec.Output
	rows       []int32 // per output row: its input row
	elems      []int32 // and its element, or -1 for a padded row
}

var _ exec.Operator = (*unnest)(nil)

// NewUnnest returns the operator for a plan's Unnest node.
func NewUnnest(mem memory.Allocator, n *planner.Unnest, out exec.Output) exec.Operator {
	t := n.Input.Schema()[n.Col].Type
	return &unnest{mem: mem, schema: exec.ArrowSchema(n.Schema()), col: n.Col, outer: n.Outer, ordinality: n.Ordinality, out: out,
		fields: t.Kind == planner.Map || t.Kind == planner.Array && t.Elem().Kind == planner.Row, multiset: t.Kind == planner.Multiset}
}

func (u *unnest) Process(ctx context.Context, _ int, b exec.Batch) error {
	list, ok := b.Rec.Column(u.col).(array.ListLike)
	if !ok {
		return fmt.Errorf("unnest: column %d is %s, not a list or map", u.col, b.Rec.Column(u.col).DataType())
	}
	var counts *array.Int32
	if u.multiset {
		if m, ok := list.(*array.Map); ok {
			counts, _ = m.Items().(*array.Int32)
		}
		if counts == nil {
			return fmt.Errorf("unnest: column %d is %s, not a multiset", u.col, list.DataType())
		}
	}
	u.rows, u.elems = u.rows[:0], u.elems[:0]
	padded := false
	for i := range b.Len() {
		first, end := list.ValueOffsets(i)
		if list.IsNull(i) || first == end {
			if u.outer {
				u.rows, u.elems = append(u.rows, int32(i)), append(u.elems, -1)
				padded = true
			}
			continue
		}
		for j := first; j < end; j++ {
			times := 1
			if counts != nil {
				times = int(counts.Value(int(j)))
			}
			for range times {
				u.rows, u.elems = append(u.rows, int32(i)), append(u.elems, int32(j))
			}
		}
	}
	if len(u.rows) == 0 {
		return nil
	}
	cols := make([]arrow.Array, 0, u.schema.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range b.Rec.Columns() {
		cols = append(cols, exec.Take(u.mem, c, u.rows))
	}
	values := list.ListValues()
	if m, ok := list.(*array.Map); ok && u.multiset {
		values = m.Keys()
	}
	var elems []arrow.Array
	sel := u.elems
	if st, ok := values.(*array.Struct); ok && u.fields {
		if st.NullN() > 0 { // a NULL ROW element: NULL fields
			sel = append([]int32(nil), u.elems...)
			for k, j := range sel {
				if j >= 0 && st.IsNull(int(j)) {
					sel[k], padded = -1, true
				}
			}
		}
		for f := range st.NumField() {
			elems = append(elems, st.Field(f))
		}
	} else {
		elems = append(elems, values)
	}
	for _, e := range elems {
		c, err := takeOrNull(u.mem, e, sel, padded)
		if err != nil {
			return err
		}
		cols = append(cols, c)
	}
	if u.ordinality {
		cols = append(cols, u.positions())
	}
	rec := array.NewRecord(u.schema, cols, int64(len(u.rows)))
	defer rec.Release()
	out := exec.Batch{Rec: rec}
	if b.Kinds != nil {
		out.Kinds = make([]exec.RowKind, len(u.rows))
		for k, i := range u.rows {
			out.Kinds[k] = b.Kinds[i]
		}
	}
	return u.out.Emit(ctx, out)
}

// positions is each output row's 1-based position among its input row's, NULL when
// padded: an element's position in its collection (a multiset's repeated element takes
// as many as it occurs).
func (u *unnest) positions() arrow.Array {
	bld := array.NewInt32Builder(u.mem)
	defer bld.Release()
	bld.Reserve(len(u.rows))
	pos := int32(0)
	for k, j := range u.elems {
		if k == 0 || u.rows[k] != u.rows[k-1] {
			pos = 0
		}
		if j < 0 {
			bld.UnsafeAppendBoolToBitmap(false)
		} else {
			pos++
			bld.UnsafeAppend(pos)
		}
	}
	return bld.NewArray()
}

// takeOrNull is exec.Take where an index of -1 gives NULL (nulls says there is one):
// such rows take a NULL appended to a copy of arr.
func takeOrNull(mem memory.Allocator, arr arrow.Array, sel []int32, nulls bool) (arrow.Array, error) {
	if !nulls {
		return exec.Take(mem, arr, sel), nil
	}
	null := array.MakeArrayOfNull(mem, arr.DataType(), 1)
	defer null.Release()
	withNull, err := array.Concatenate([]arrow.Array{arr, null}, mem)
	if err != nil {
		return nil, fmt.Errorf("unnest: %w", err)
	}
	defer withNull.Release()
	idx := make([]int32, len(sel))
	for k, j := range sel {
		if j < 0 {
			j = int32(arr.Len())
		}
		idx[k] = j
	}
	return exec.Take(mem, withNull, idx), nil
}

func (u *unnest) String() string { return "unnest" }
