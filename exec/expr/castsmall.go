package expr

import (
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// CAST of TINYINT, SMALLINT, FLOAT and the binary types. The planner computes with INT
// and DOUBLE (see planner.widened), so only CAST meets these types: from one, the value
// is widened exactly (TINYINT and SMALLINT to INT, FLOAT to DOUBLE) and cast on; to one,
// it is cast to the wide type and narrowed, failing (NULL for TRY_CAST) out of range.

// wideOf is the type a value of t is computed as.
func wideOf(t planner.Type) planner.Type {
	switch t.Kind {
	case planner.TinyInt, planner.SmallInt:
		return planner.TypeInt
	case planner.Float:
		return planner.TypeDouble
	}
	return t
}

func isSmall(t planner.Type) bool { return wideOf(t).Kind != t.Kind }

// castSmall returns the kernel of a cast from or to a small type, or nil.
func castSmall(from, to planner.Type, try bool) (kernelFn, error) {
	switch {
	case from.Kind == planner.Float && to.Kind == planner.String:
		return castViaFormat, nil // Java's Float.toString, not the double's digits
	case isSmall(from):
		k, err := castKernel(wideOf(from), to, try)
		if err != nil {
			return nil, err
		}
		return then(widenSmall(from), k), nil
	case isSmall(to):
		k, err := castKernel(from, wideOf(to), try)
		if err != nil {
			return nil, err
		}
		return then(k, narrowSmall(to, castFail{try: try, to: to})), nil
	}
	return nil, nil
}

// then runs k2 on the result of k1.
func then(k1, k2 kernelFn) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		d, err := k1(c, n, args)
		if err != nil || d.null {
			return d, err
		}
		mid := []datum{d}
		defer releaseAll(mid)
		return k2(c, n, mid)
	}
}

// castViaFormat prints values as FormatValue does.
func castViaFormat(c *ctx, n int, args []datum) (datum, error) {
	a := args[0].arr
	return strRows(c, n, args, 12*n, func(i int, dst []byte) ([]byte, bool, error) {
		return format.AppendValue(dst, a, i, c.loc), true, nil
	})
}

// widenSmall converts TINYINT and SMALLINT to INT, FLOAT to DOUBLE.
func widenSmall(from planner.Type) kernelFn {
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		vbuf := andValidity(c.mem, n, args)
		if from.Kind == planner.Float {
			src := arrowbuf.Values[float32](a.arr)
			buf, out := arrowbuf.AllocFixed[float64](c.mem, n)
			for i := range out {
				out[i] = float64(src[i])
			}
			return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Float64, n, vbuf, buf, -1), true), nil
		}
		buf, out := arrowbuf.AllocFixed[int32](c.mem, n)
		if from.Kind == planner.TinyInt {
			for i, v := range arrowbuf.Values[int8](a.arr)[:n] {
				out[i] = int32(v)
			}
		} else {
			for i, v := range arrowbuf.Values[int16](a.arr)[:n] {
				out[i] = int32(v)
			}
		}
		return arrDatum(arrowbuf.NewArray(arrow.PrimitiveTypes.Int32, n, vbuf, buf, -1), true), nil
	}
}

// narrowSmall converts INT to TINYINT or SMALLINT (failing out of range) and DOUBLE to
// FLOAT (rounding to the nearest float, as Java does; too large a value is infinite).
func narrowSmall(to planner.Type, f castFail) kernelFn {
	dt := exec.ArrowType(to)
	return func(c *ctx, n int, args []datum) (datum, error) {
		a := args[0]
		switch to.Kind {
		case planner.Float:
			if a.arr == nil {
				return datum{f: float64(float32(a.f))}, nil
			}
			src := arrowbuf.Values[float64](a.arr)
			buf, out := arrowbuf.AllocFixed[float32](c.mem, n)
			for i := range out {
				out[i] = float32(src[i])
			}
			return arrDatum(arrowbuf.NewArray(dt, n, andValidity(c.mem, n, args), buf, -1), true), nil
		case planner.TinyInt:
			return narrowInt[int8](c, n, a, f, dt, math.MinInt8, math.MaxInt8)
		}
		return narrowInt[int16](c, n, a, f, dt, math.MinInt16, math.MaxInt16)
	}
}

func narrowInt[T int8 | int16](c *ctx, n int, a datum, f castFail, dt arrow.DataType, lo, hi int64) (datum, error) {
	if a.arr == nil {
		if a.i < lo || a.i > hi {
			if _, err := f.fail(itoa64(a.i)); err != nil {
				return datum{}, err
			}
			return nullDatum(), nil
		}
		return datum{i: a.i}, nil
	}
	v := intColOf(a)
	buf, out := arrowbuf.AllocFixed[T](c.mem, n)
	vbuf, valid := writableValidity(c.mem, n, []datum{a})
	for i := range out {
		if !bitAt(valid, i) {
			continue
		}
		x := v.at(i)
		if x < lo || x > hi {
			if _, err := f.fail(itoa64(x)); err != nil {
				buf.Release()
				vbuf.Release()
				return datum{}, err
			}
			clearBit(valid, i)
			continue
		}
		out[i] = T(x)
	}
	return arrDatum(arrowbuf.NewArray(dt, n, vbuf, buf, array.UnknownNullCount), true), nil
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// castBinary converts between STRING and the binary types (a STRING's UTF-8 bytes), and
// to BINARY(n) and VARBINARY(n), truncating to n bytes and padding BINARY(n) with zero
// bytes, as Flink does.
func castBinary(from, to planner.Type) kernelFn {
	dt := exec.ArrowType(to)
	return func(c *ctx, n int, args []datum) (datum, error) {
		src := args[0].arr
		d, err := strRows(c, n, args, 8*n, func(i int, dst []byte) ([]byte, bool, error) {
			var v []byte
			switch a := src.(type) {
			case *array.String:
				v = []byte(a.Value(i))
			case *array.Binary:
				v = a.Value(i)
			}
			if to.Kind == planner.Binary && to.Length > 0 && len(v) > to.Length {
				v = v[:to.Length]
			}
			dst = append(dst, v...)
			for k := len(v); to.Fixed && k < to.Length; k++ {
				dst = append(dst, 0)
			}
			return dst, true, nil
		})
		if err != nil || to.Kind != planner.Binary {
			return d, err
		}
		out := relabel(d.arr, dt)
		d.release()
		return arrDatum(out, true), nil
	}
}

// relabel returns arr as an array of dt with the same layout (a STRING as BYTES).
func relabel(arr arrow.Array, dt arrow.DataType) arrow.Array {
	d := arr.Data()
	nd := array.NewData(dt, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
	out := array.MakeFromData(nd)
	nd.Release()
	return out
}
