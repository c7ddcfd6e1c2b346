package expr

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
	"math"
)

// Kernels of the structured types. A ROW, ARRAY or MAP is never a scalar datum except as
// NULL: callNode evaluates a structured call over whole arrays, and constant folding skips
// them (isConstExpr), so these kernels see arrays or NULL scalars.

// asArray returns d as an array of n rows of type t (a NULL scalar as n NULLs); the
// caller releases it.
func asArray(c *ctx, t planner.Type, d datum, n int) arrow.Array {
	if d.arr != nil {
		d.arr.Retain()
		return d.arr
	}
	return broadcast(c.mem, t, exec.ArrowType(t), d, n)
}

// maskNulls returns arr with the rows whose bit in keep is clear made NULL, sharing arr's
// buffers but its validity.
func maskNulls(mem memory.Allocator, arr arrow.Array, keep []byte) arrow.Array {
	data := arr.Data()
	off, n := data.Offset(), data.Len()
	buf, bits := arrowbuf.AllocBits(mem, off+n)
	for i := 0; i < n; i++ {
		if arr.IsValid(i) && bitAt(keep, i) {
			setBit(bits, off+i)
		}
	}
	bufs := append([]*memory.Buffer{buf}, data.Buffers()[1:]...)
	nd := array.NewData(data.DataType(), n, bufs, data.Children(), array.UnknownNullCount, off)
	out := array.MakeFromData(nd)
	nd.Release()
	buf.Release()
	return out
}

// sharesValidity says whether field f of s has s's validity bitmap (as the nexmark source
// writes its ROWs), so it is NULL where s is already.
func sharesValidity(s *array.Struct, f arrow.Array) bool {
	sb, fb := s.Data().Buffers()[0], f.Data().Buffers()[0]
	return sb != nil && sb == fb && s.Data().Offset() == f.Data().Offset()
}

// fieldKernel reads field idx of a ROW: NULL where the row is NULL.
func fieldKernel(idx int) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil {
			return nullDatum(), nil
		}
		s, ok := args[0].arr.(*array.Struct)
		if !ok || idx >= s.NumField() {
			return datum{}, newError(ErrUnsupported, "field %d of %s", idx, args[0].arr.DataType())
		}
		f := s.Field(idx)
		if s.NullN() == 0 || sharesValidity(s, f) {
			f.Retain()
			return arrDatum(f, false), nil
		}
		keep, _ := arrowbuf.Validity(s)
		bm := make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			if bitAt(keep, s.Data().Offset()+i) {
				setBit(bm, i)
			}
		}
		return arrDatum(maskNulls(c.mem, f, bm), false), nil
	}
}

// itemKernel reads a[i] (ARRAY, 1-based) or m[k] (MAP): NULL when either is NULL, the
// index is out of range or the key is absent.
func itemKernel(t planner.Type, keyT planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil || args[1].null {
			return nullDatum(), nil
		}
		list, ok := args[0].arr.(array.ListLike)
		if !ok {
			return datum{}, newError(ErrUnsupported, "subscript of %s", args[0].arr.DataType())
		}
		var values arrow.Array
		var find func(i int, start, end int64) (int64, bool)
		if t.Kind == planner.Map {
			m := list.(*array.Map)
			values = m.Items()
			keys := m.Keys()
			idx := asArray(c, keyT, args[1], n)
			defer idx.Release()
			find = func(i int, start, end int64) (int64, bool) {
				if idx.IsNull(i) {
					return 0, false
				}
				want := keyOf(idx, i)
				for k := end - 1; k >= start; k-- {
					if keys.IsValid(int(k)) && keyOf(keys, int(k)) == want {
						return k, true
					}
				}
				return 0, false
			}
		} else {
			values = list.ListValues()
			idx := intColOf(args[1])
			valid := args[1].arr
			find = func(i int, start, end int64) (int64, bool) {
				if valid != nil && valid.IsNull(i) {
					return 0, false
				}
				k := idx.at(i)
				if k < 1 || k > end-start {
					return 0, false
				}
				return start + k - 1, true
			}
		}
		sel := make([]int32, n)
		keep := make([]byte, (n+7)/8)
		for i := 0; i < n; i++ {
			if list.IsNull(i) {
				continue
			}
			start, end := list.ValueOffsets(i)
			if k, ok := find(i, start, end); ok {
				sel[i] = int32(k)
				setBit(keep, i)
			}
		}
		if values.Len() == 0 {
			return nullDatum(), nil
		}
		taken := exec.Take(c.mem, values, sel)
		defer taken.Release()
		return arrDatum(maskNulls(c.mem, taken, keep), false), nil
	}
}

// keyOf is a scalar as a comparable Go value, for MAP keys.
func keyOf(a arrow.Array, i int) any {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Boolean:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i)
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	return nil
}

// rowKernel builds a ROW of type t from its field values.
func rowKernel(t planner.Type, argT []planner.Type) kernelFn {
	dt := exec.ArrowType(t)
	return func(c *ctx, n int, args []datum) (datum, error) {
		children := make([]arrow.ArrayData, len(args))
		for i := range args {
			a := asArray(c, argT[i], args[i], n)
			defer a.Release()
			children[i] = a.Data()
		}
		data := array.NewData(dt, n, []*memory.Buffer{nil}, children, 0, 0)
		out := array.MakeFromData(data)
		data.Release()
		return arrDatum(out, false), nil
	}
}

// listKernel builds an ARRAY (step 1) or a MAP (step 2: keys and values alternate) of
// type t whose row i holds the arguments' row i, in order. A MAP keeps the last value of
// a key, at the key's first place; a NULL key fails, since a MAP key cannot be NULL here.
func listKernel(t planner.Type, argT []planner.Type) kernelFn {
	dt := exec.ArrowType(t)
	return func(c *ctx, n int, args []datum) (datum, error) {
		arrs := make([]arrow.Array, len(args))
		for i := range args {
			arrs[i] = asArray(c, argT[i], args[i], n)
			defer arrs[i].Release()
		}
		step := 1
		if t.Kind == planner.Map {
			step = 2
		}
		k := len(args) / step
		offBuf, offs := arrowbuf.AllocFixed[int32](c.mem, n+1)
		defer offBuf.Release()
		parts := make([][]int32, step) // per part (elements; or keys, values): the indices
		offs[0] = 0
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				if step == 2 {
					if arrs[2*j].IsNull(i) {
						return datum{}, newError(ErrInvalidArgument, "a MAP key is NULL")
					}
					if later(arrs, i, j, k) {
						continue
					}
					parts[0] = append(parts[0], int32(j*n+i))
					parts[1] = append(parts[1], int32(lastOf(arrs, i, j, k)*n+i))
					continue
				}
				parts[0] = append(parts[0], int32(j*n+i))
			}
			offs[i+1] = int32(len(parts[0]))
		}
		children := make([]arrow.Array, step)
		for p := range children {
			var src []arrow.Array
			for j := p; j < len(arrs); j += step {
				src = append(src, arrs[j])
			}
			all, err := array.Concatenate(src, c.mem)
			if err != nil {
				return datum{}, newError(ErrUnsupported, "%s: %v", t, err)
			}
			children[p] = exec.Take(c.mem, all, parts[p])
			all.Release()
			defer children[p].Release()
		}
		var child arrow.ArrayData
		if step == 1 {
			child = children[0].Data()
		} else {
			entries := dt.(*arrow.MapType).Elem()
			sd := array.NewData(entries, children[0].Len(), []*memory.Buffer{nil}, []arrow.ArrayData{children[0].Data(), children[1].Data()}, 0, 0)
			defer sd.Release()
			child = sd
		}
		data := array.NewData(dt, n, []*memory.Buffer{nil, offBuf}, []arrow.ArrayData{child}, 0, 0)
		out := array.MakeFromData(data)
		data.Release()
		return arrDatum(out, false), nil
	}
}

// later reports whether key j of row i is also an earlier pair's key: that place holds it.
func later(arrs []arrow.Array, i, j, k int) bool {
	want := keyOf(arrs[2*j], i)
	for p := 0; p < j; p++ {
		if keyOf(arrs[2*p], i) == want {
			return true
		}
	}
	return false
}

// lastOf returns the position, among the concatenated values, of the last pair of row i
// with key j's key: MAP keeps a key's last value.
func lastOf(arrs []arrow.Array, i, j, k int) int {
	want := keyOf(arrs[2*j], i)
	last := j
	for p := j + 1; p < k; p++ {
		if keyOf(arrs[2*p], i) == want {
			last = p
		}
	}
	return last
}

// cardinalityKernel counts an ARRAY's elements or a MAP's entries.
func cardinalityKernel(c *ctx, n int, args []datum) (datum, error) {
	list, ok := args[0].arr.(array.ListLike)
	if !ok {
		return datum{}, newError(ErrUnsupported, "CARDINALITY of %s", args[0].arr.DataType())
	}
	buf, out := arrowbuf.AllocFixed[int32](c.mem, n)
	for i := 0; i < n; i++ {
		start, end := list.ValueOffsets(i)
		out[i] = int32(end - start)
	}
	return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Int32, n, andValidity(c.mem, n, args), buf, array.UnknownNullCount), true), nil
}

// multisetCardinalityKernel is CARDINALITY of a MULTISET: how many elements it holds,
// each counted as often as it occurs (the sum of the counts of its map).
func multisetCardinalityKernel(c *ctx, n int, args []datum) (datum, error) {
	m, counts, err := multisetOf("CARDINALITY", args[0])
	if err != nil {
		return datum{}, err
	}
	return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
		start, end := m.ValueOffsets(i)
		var sum int64
		for k := start; k < end; k++ {
			sum += int64(counts.Value(int(k)))
		}
		if sum > math.MaxInt32 {
			return 0, false, newError(ErrInvalidArgument, "CARDINALITY of a MULTISET of %d elements overflows INT", sum)
		}
		return int32(sum), true, nil
	})
}

// multisetOf returns d's MULTISET as a map array and its counts.
func multisetOf(fn string, d datum) (*array.Map, *array.Int32, error) {
	m, ok := d.arr.(*array.Map)
	if !ok {
		return nil, nil, newError(ErrUnsupported, "%s of %s", fn, d.arr.DataType())
	}
	counts, ok := m.Items().(*array.Int32)
	if !ok {
		return nil, nil, newError(ErrUnsupported, "%s of %s", fn, d.arr.DataType())
	}
	return m, counts, nil
}

// multisetElementKernel returns a MULTISET's only element: NULL when it is empty, an
// error when it holds more than one (one element twice is two), as Calcite's ELEMENT.
func multisetElementKernel(c *ctx, n int, args []datum) (datum, error) {
	m, counts, err := multisetOf("ELEMENT", args[0])
	if err != nil {
		return datum{}, err
	}
	sel := make([]int32, n)
	keep := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if m.IsNull(i) {
			continue
		}
		start, end := m.ValueOffsets(i)
		var total int64
		for k := start; k < end; k++ {
			total += int64(counts.Value(int(k)))
		}
		switch {
		case total == 0:
		case total == 1:
			sel[i] = int32(start)
			setBit(keep, i)
		default:
			return datum{}, newError(ErrInvalidArgument, "ELEMENT of a MULTISET of %d elements: it must have at most one", total)
		}
	}
	keys := m.Keys()
	if keys.Len() == 0 {
		return nullDatum(), nil
	}
	taken := exec.Take(c.mem, keys, sel)
	defer taken.Release()
	return arrDatum(maskNulls(c.mem, taken, keep), false), nil
}

// elementKernel returns an ARRAY's only element: NULL when it is empty, an error when it
// has more than one, as Flink's ELEMENT.
func elementKernel(c *ctx, n int, args []datum) (datum, error) {
	list, ok := args[0].arr.(array.ListLike)
	if !ok {
		return datum{}, newError(ErrUnsupported, "ELEMENT of %s", args[0].arr.DataType())
	}
	sel := make([]int32, n)
	keep := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		if list.IsNull(i) {
			continue
		}
		start, end := list.ValueOffsets(i)
		switch end - start {
		case 0:
		case 1:
			sel[i] = int32(start)
			setBit(keep, i)
		default:
			return datum{}, newError(ErrInvalidArgument, "ELEMENT of an ARRAY of %d elements: it must have at most one", end-start)
		}
	}
	values := list.ListValues()
	if values.Len() == 0 {
		return nullDatum(), nil
	}
	taken := exec.Take(c.mem, values, sel)
	defer taken.Release()
	return arrDatum(maskNulls(c.mem, taken, keep), false), nil
}
