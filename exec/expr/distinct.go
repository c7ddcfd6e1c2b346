package expr

import (
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// distinctKernel is IS [NOT] DISTINCT FROM: <> where both sides are values, NULL equal to
// NULL and distinct from any value; never NULL. It combines the <> kernel's bits with the
// operands' validity a byte at a time.
func distinctKernel(not bool, ta, tb planner.Type) (kernelFn, error) {
	ne, err := cmpKernel(planner.FnNe, ta, tb)
	if err != nil {
		return nil, err
	}
	return func(c *ctx, n int, args []datum) (datum, error) {
		a, b := args[0], args[1]
		nb := int(bitutil.BytesForBits(int64(n)))
		var neBits []byte
		if !a.null && !b.null && physOf(ta) != physNull {
			d, err := ne(c, n, []datum{a, b})
			if err != nil {
				return datum{}, err
			}
			defer d.release()
			neBits, _ = boolBits(d.arr)
		}
		va, vaBuf := validByte(c, a, n)
		vb, vbBuf := validByte(c, b, n)
		defer releaseBuf(vaBuf)
		defer releaseBuf(vbBuf)
		buf, out := arrowbuf.AllocBits(c.mem, n)
		flip := byte(0)
		if not {
			flip = 0xff
		}
		for k := 0; k < nb; k++ {
			x, y := va(k), vb(k)
			var v byte
			if neBits != nil {
				v = neBits[k]
			}
			out[k] = (x&y&v | (x ^ y)) ^ flip
		}
		return arrDatum(arrowbuf.NewArray(boolType, n, nil, buf, 0), true), nil
	}, nil
}

// validByte returns byte k of d's validity: 0xff for a value scalar or an array without
// nulls, 0 for a NULL scalar; and the buffer to release, if any.
func validByte(c *ctx, d datum, n int) (func(k int) byte, *memory.Buffer) {
	if d.arr == nil {
		if d.null {
			return func(int) byte { return 0 }, nil
		}
		return func(int) byte { return 0xff }, nil
	}
	if isNullArr(d.arr) {
		return func(int) byte { return 0 }, nil
	}
	buf, bm := datumValidity(c.mem, d, n)
	if bm == nil {
		return func(int) byte { return 0xff }, nil
	}
	return func(k int) byte { return bm[k] }, buf
}

func releaseBuf(b *memory.Buffer) {
	if b != nil {
		b.Release()
	}
}
