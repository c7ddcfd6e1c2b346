package expr

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// CAST of the structured types: to STRING as Flink prints them ((1, a), [1, 2], {k=v}),
// and between two ROWs, ARRAYs or MAPs of the same shape by casting their parts (which
// also renames a ROW's fields, as INSERT into a ROW column does).

func castNested(from, to planner.Type, try bool) (kernelFn, error) {
	if to.Kind == planner.String {
		return func(c *ctx, n int, args []datum) (datum, error) {
			a := args[0].arr
			return strRows(c, n, args, 16*n, func(i int, dst []byte) ([]byte, bool, error) {
				return format.AppendValue(dst, a, i, c.loc), true, nil
			})
		}, nil
	}
	dt := exec.ArrowType(to)
	switch from.Kind {
	case planner.Row:
		ff, tf := from.Fields(), to.Fields()
		ks := make([]kernelFn, len(ff))
		for i := range ff {
			k, err := castKernel(ff[i].Type, tf[i].Type, try)
			if err != nil {
				return nil, err
			}
			ks[i] = k
		}
		return func(c *ctx, n int, args []datum) (datum, error) {
			s := args[0].arr.(*array.Struct)
			children := make([]arrow.ArrayData, len(ks))
			for i, k := range ks {
				f, err := castPart(c, k, tf[i].Type, s.Field(i))
				if err != nil {
					return datum{}, err
				}
				defer f.Release()
				children[i] = f.Data()
			}
			keep := make([]byte, (n+7)/8)
			for i := 0; i < n; i++ {
				if s.IsValid(i) {
					setBit(keep, i)
				}
			}
			data := array.NewData(dt, n, []*memory.Buffer{nil}, children, 0, 0)
			defer data.Release()
			all := array.MakeFromData(data)
			defer all.Release()
			return arrDatum(maskNulls(c.mem, all, keep), false), nil
		}, nil
	case planner.Array, planner.Map, planner.Multiset:
		kk, err := castKernel(from.Elem(), to.Elem(), try)
		if err != nil {
			return nil, err
		}
		var kv kernelFn
		if from.IsMapLike() {
			if kv, err = castKernel(from.Value(), to.Value(), try); err != nil {
				return nil, err
			}
		}
		return func(c *ctx, n int, args []datum) (datum, error) {
			src := args[0].arr.Data()
			var child arrow.ArrayData
			if m, ok := args[0].arr.(*array.Map); ok {
				keys, err := castPart(c, kk, to.Elem(), m.Keys())
				if err != nil {
					return datum{}, err
				}
				defer keys.Release()
				items, err := castPart(c, kv, to.Value(), m.Items())
				if err != nil {
					return datum{}, err
				}
				defer items.Release()
				sd := array.NewData(dt.(*arrow.MapType).Elem(), keys.Len(), []*memory.Buffer{nil},
					[]arrow.ArrayData{keys.Data(), items.Data()}, 0, 0)
				defer sd.Release()
				child = sd
			} else {
				values, err := castPart(c, kk, to.Elem(), args[0].arr.(*array.List).ListValues())
				if err != nil {
					return datum{}, err
				}
				defer values.Release()
				child = values.Data()
			}
			data := array.NewData(dt, n, src.Buffers(), []arrow.ArrayData{child}, src.NullN(), src.Offset())
			out := array.MakeFromData(data)
			data.Release()
			return arrDatum(out, false), nil
		}, nil
	}
	return nil, newError(ErrUnsupported, "cannot cast %s to %s", from, to)
}

// castPart applies a cast kernel to a whole child array, returning an array of type to.
func castPart(c *ctx, k kernelFn, to planner.Type, a arrow.Array) (arrow.Array, error) {
	a.Retain()
	args := []datum{arrDatum(a, false)}
	defer releaseAll(args)
	d, err := k(c, a.Len(), args)
	if err != nil {
		return nil, err
	}
	out := asArray(c, to, d, a.Len())
	d.release()
	return out, nil
}
