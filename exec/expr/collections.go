package expr

import (
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// The collection functions of Flink's reference over ARRAY and MAP. Those that return a
// collection pick elements of their arguments: they list, row by row, the indices of the
// elements they keep, and one Take builds the result's values.

// elemKey is element i of values as a comparable Go value (nested values by their
// printed form), and whether it is NULL.
func elemKey(values arrow.Array, i int) (any, bool) {
	if values.IsNull(i) {
		return nil, true
	}
	if k := keyOf(values, i); k != nil {
		return k, false
	}
	return format.FormatValue(values, i, time.UTC), false
}

// listOf returns d's ARRAY or MAP, and the array of its elements (a MAP's keys).
func listOf(fn planner.Func, d datum) (array.ListLike, arrow.Array, error) {
	list, ok := d.arr.(array.ListLike)
	if !ok {
		return nil, nil, newError(ErrUnsupported, "%s of %s", fn, d.arr.DataType())
	}
	if m, ok := list.(*array.Map); ok {
		return list, m.Keys(), nil
	}
	return list, list.ListValues(), nil
}

// pickList builds an ARRAY of type t from values: row i holds the elements pick lists for
// it (appending their indices to dst), NULL where valid says so.
func pickList(c *ctx, t planner.Type, values arrow.Array, n int, valid func(i int) bool, pick func(i int, dst []int32) []int32) datum {
	offBuf, offs := arrowbuf.AllocFixed[int32](c.mem, n+1)
	defer offBuf.Release()
	vbuf, bits := allocOnes(c.mem, n)
	defer vbuf.Release()
	var sel []int32
	nulls := 0
	for i := 0; i < n; i++ {
		if valid(i) {
			sel = pick(i, sel)
		} else {
			clearBit(bits, i)
			nulls++
		}
		offs[i+1] = int32(len(sel))
	}
	child := exec.Take(c.mem, values, sel)
	defer child.Release()
	var validity *memory.Buffer
	if nulls > 0 {
		validity = vbuf
	}
	data := array.NewData(exec.ArrowType(t), n, []*memory.Buffer{validity, offBuf}, []arrow.ArrayData{child.Data()}, nulls, 0)
	defer data.Release()
	return arrDatum(array.MakeFromData(data), false)
}

// needleKeys returns the keys of a needle argument (already of the element type), row
// by row.
func needleKeys(c *ctx, t planner.Type, d datum, n int) (func(i int) (any, bool), func()) {
	arr := asArray(c, t, d, n)
	return func(i int) (any, bool) { return elemKey(arr, i) }, arr.Release
}

// arrayContainsKernel is ARRAY_CONTAINS(a, x) (whether x, NULL included, is an element)
// and ARRAY_POSITION(a, x) (the 1-based place of its first occurrence, 0 when absent).
func arrayFindKernel(fn planner.Func, elemT planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil || fn == planner.FnArrayPosition && args[1].null {
			return nullDatum(), nil
		}
		list, values, err := listOf(fn, args[0])
		if err != nil {
			return datum{}, err
		}
		needle, done := needleKeys(c, elemT, args[1], n)
		defer done()
		find := func(i int) int {
			want, wantNull := needle(i)
			start, end := list.ValueOffsets(i)
			for k := start; k < end; k++ {
				if got, null := elemKey(values, int(k)); null == wantNull && got == want {
					return int(k-start) + 1
				}
			}
			return 0
		}
		if fn == planner.FnArrayContains {
			return boolRows(c, n, args[:1], func(i int) (bool, bool, error) { return find(i) > 0, true, nil })
		}
		return fixedRows(c, n, args, arrow.PrimitiveTypes.Int32, func(i int) (int32, bool, error) {
			return int32(find(i)), true, nil
		})
	}
}

// arrayPickKernel is ARRAY_DISTINCT, ARRAY_REMOVE and ARRAY_REVERSE: NULL where the array
// is, and for ARRAY_REMOVE where the needle is.
func arrayPickKernel(fn planner.Func, t planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil || len(args) > 1 && args[1].null {
			return nullDatum(), nil
		}
		list, values, err := listOf(fn, args[0])
		if err != nil {
			return datum{}, err
		}
		needle := func(int) (any, bool) { return nil, false }
		valid := func(i int) bool { return list.IsValid(i) }
		if fn == planner.FnArrayRemove {
			var done func()
			needle, done = needleKeys(c, t.Elem(), args[1], n)
			defer done()
			if a := args[1].arr; a != nil {
				valid = func(i int) bool { return list.IsValid(i) && a.IsValid(i) }
			}
		}
		seen := map[any]bool{}
		return pickList(c, t, values, n, valid, func(i int, dst []int32) []int32 {
			start, end := list.ValueOffsets(i)
			switch fn {
			case planner.FnArrayReverse:
				for k := end - 1; k >= start; k-- {
					dst = append(dst, int32(k))
				}
			case planner.FnArrayRemove:
				want, _ := needle(i)
				for k := start; k < end; k++ {
					if got, null := elemKey(values, int(k)); null || got != want {
						dst = append(dst, int32(k))
					}
				}
			default: // ARRAY_DISTINCT: first occurrences; NULL is one value
				clear(seen)
				for k := start; k < end; k++ {
					got, null := elemKey(values, int(k))
					if null {
						got = nullKey{}
					}
					if !seen[got] {
						seen[got] = true
						dst = append(dst, int32(k))
					}
				}
			}
			return dst
		}), nil
	}
}

// nullKey stands for NULL among the elements ARRAY_DISTINCT has seen.
type nullKey struct{}

// mapPartKernel is MAP_KEYS and MAP_VALUES: a MAP's keys or values as an ARRAY, in the
// MAP's order.
func mapPartKernel(fn planner.Func, t planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		m, ok := args[0].arr.(*array.Map)
		if !ok {
			return datum{}, newError(ErrUnsupported, "%s of %s", fn, args[0].arr.DataType())
		}
		part := m.Keys()
		if fn == planner.FnMapValues {
			part = m.Items()
		}
		return pickList(c, t, part, n, m.IsValid, func(i int, dst []int32) []int32 {
			start, end := m.ValueOffsets(i)
			for k := start; k < end; k++ {
				dst = append(dst, int32(k))
			}
			return dst
		}), nil
	}
}

// mapFromArraysKernel is MAP_FROM_ARRAYS(keys, values): NULL where either is; the arrays
// must be as long; a key that repeats keeps its first place and its last value, as MAP[]
// does.
func mapFromArraysKernel(t planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		if args[0].arr == nil || args[1].arr == nil {
			return nullDatum(), nil
		}
		kl, keys, err := listOf(planner.FnMapFromArrays, args[0])
		if err != nil {
			return datum{}, err
		}
		vl, values, err := listOf(planner.FnMapFromArrays, args[1])
		if err != nil {
			return datum{}, err
		}
		offBuf, offs := arrowbuf.AllocFixed[int32](c.mem, n+1)
		defer offBuf.Release()
		vbuf, bits := allocOnes(c.mem, n)
		defer vbuf.Release()
		var ksel, vsel []int32
		place := map[any]int{}
		nulls := 0
		for i := 0; i < n; i++ {
			offs[i+1] = offs[i]
			if kl.IsNull(i) || vl.IsNull(i) {
				clearBit(bits, i)
				nulls++
				continue
			}
			ks, ke := kl.ValueOffsets(i)
			vs, ve := vl.ValueOffsets(i)
			if ke-ks != ve-vs {
				return datum{}, newError(ErrInvalidArgument, "MAP_FROM_ARRAYS of %d keys and %d values: the arrays must be as long", ke-ks, ve-vs)
			}
			clear(place)
			for k := ks; k < ke; k++ {
				key, null := elemKey(keys, int(k))
				if null {
					return datum{}, newError(ErrInvalidArgument, "a MAP key is NULL")
				}
				if at, ok := place[key]; ok {
					vsel[at] = int32(vs + k - ks)
					continue
				}
				place[key] = len(ksel)
				ksel = append(ksel, int32(k))
				vsel = append(vsel, int32(vs+k-ks))
			}
			offs[i+1] = int32(len(ksel))
		}
		kc := exec.Take(c.mem, keys, ksel)
		defer kc.Release()
		vc := exec.Take(c.mem, values, vsel)
		defer vc.Release()
		dt := exec.ArrowType(t).(*arrow.MapType)
		entries := array.NewData(dt.Elem(), kc.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{kc.Data(), vc.Data()}, 0, 0)
		defer entries.Release()
		var validity *memory.Buffer
		if nulls > 0 {
			validity = vbuf
		}
		data := array.NewData(dt, n, []*memory.Buffer{validity, offBuf}, []arrow.ArrayData{entries}, nulls, 0)
		defer data.Release()
		return arrDatum(array.MakeFromData(data), false), nil
	}
}

// strToMapKernel is STR_TO_MAP(s [, pairDelimiter [, keyValueDelimiter]]): s split into
// pairs at the first regular expression (',' by default), each pair into key and value
// at the first match of the second ('='; a pair without it has a NULL value). A key that
// repeats keeps its first place and its last value; an empty s is an empty MAP.
func strToMapKernel(t planner.Type) kernelFn {
	cache := map[string]*regexp.Regexp{}
	compile := func(p string) (*regexp.Regexp, error) {
		if re, ok := cache[p]; ok {
			return re, nil
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, newError(ErrInvalidArgument, "STR_TO_MAP delimiter %q is not a valid regular expression: %v", p, err)
		}
		if len(cache) > 64 {
			clear(cache)
		}
		cache[p] = re
		return re, nil
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		for _, a := range args {
			if a.null {
				return nullDatum(), nil
			}
		}
		col := func(k int, def string) strCol {
			if k < len(args) {
				return strColOf(args[k])
			}
			return strCol{s: def, scalar: true}
		}
		s, pairs, kvs := col(0, ""), col(1, ","), col(2, "=")
		b := array.NewMapBuilderWithType(c.mem, exec.ArrowType(t).(*arrow.MapType))
		defer b.Release()
		kb, vb := b.KeyBuilder().(*array.StringBuilder), b.ItemBuilder().(*array.StringBuilder)
		for i := 0; i < n; i++ {
			if anyNullAt(args, i) {
				b.AppendNull()
				continue
			}
			pairRE, err := compile(pairs.at(i))
			if err != nil {
				return datum{}, err
			}
			kvRE, err := compile(kvs.at(i))
			if err != nil {
				return datum{}, err
			}
			b.Append(true)
			text := s.at(i)
			if text == "" {
				continue
			}
			var order []string
			vals := map[string]*string{}
			for _, pair := range pairRE.Split(text, -1) {
				key, value := pair, (*string)(nil)
				if loc := kvRE.FindStringIndex(pair); loc != nil {
					key = pair[:loc[0]]
					v := pair[loc[1]:]
					value = &v
				}
				if _, ok := vals[key]; !ok {
					order = append(order, key)
				}
				vals[key] = value
			}
			for _, key := range order {
				kb.Append(strings.Clone(key))
				if v := vals[key]; v != nil {
					vb.Append(*v)
				} else {
					vb.AppendNull()
				}
			}
		}
		return arrDatum(b.NewArray(), false), nil
	}
}

// anyNullAt reports whether some argument is NULL at row i.
func anyNullAt(args []datum, i int) bool {
	for _, a := range args {
		if a.null || a.arr != nil && a.arr.IsNull(i) {
			return true
		}
	}
	return false
}

// jsonStringKernel is JSON_STRING(x): x as JSON text, as the json format writes it.
func jsonStringKernel(t planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		arr := asArray(c, t, args[0], n)
		defer arr.Release()
		return strRows(c, n, args, 16*n, func(i int, dst []byte) ([]byte, bool, error) {
			return append(dst, format.JSONValue(arr, i, c.loc)...), true, nil
		})
	}
}

// jsonBuildKernel is JSON_OBJECT(keep, k1, v1, ...) and JSON_ARRAY(keep, v1, ...): JSON
// text of the values (as the json format writes them), with NULL values kept as null or
// left out; a value that is itself a JSON_OBJECT or JSON_ARRAY is inserted as JSON.
func jsonBuildKernel(e *planner.Call, argT []planner.Type) kernelFn {
	object := e.Fn == planner.FnJSONObject
	raw := make([]bool, len(e.Args))
	for i, a := range e.Args {
		if call, ok := a.(*planner.Call); ok && (call.Fn == planner.FnJSONObject || call.Fn == planner.FnJSONArray) {
			raw[i] = true
		}
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		keepAt := func(int) bool { return args[0].b }
		if flags, ok := args[0].arr.(*array.Boolean); ok { // a folded call's arguments are columns
			keepAt = flags.Value
		}
		vals := make([]arrow.Array, len(args))
		for i := 1; i < len(args); i++ {
			vals[i] = asArray(c, argT[i], args[i], n)
			defer vals[i].Release()
		}
		step, first := 1, 1
		if object {
			step, first = 2, 2
		}
		open, end := byte('['), byte(']')
		if object {
			open, end = '{', '}'
		}
		return strRows(c, n, nil, 16*n, func(i int, dst []byte) ([]byte, bool, error) {
			dst = append(dst, open)
			written := false
			for k := first; k < len(args); k += step {
				v := vals[k]
				if v.IsNull(i) && !keepAt(i) {
					continue
				}
				if written {
					dst = append(dst, ',')
				}
				written = true
				if object {
					dst = append(dst, format.JSONValue(vals[k-1], i, c.loc)...)
					dst = append(dst, ':')
				}
				switch {
				case v.IsNull(i):
					dst = append(dst, "null"...)
				case raw[k]:
					dst = append(dst, v.(*array.String).Value(i)...)
				default:
					dst = append(dst, format.JSONValue(v, i, c.loc)...)
				}
			}
			return append(dst, end), true, nil
		})
	}
}
