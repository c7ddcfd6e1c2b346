package ops

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/planner"
)

// variance is VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP over a DOUBLE argument (the
// planner casts others). Each group keeps its count, mean and sum of squared deviations
// (Welford's update, which is run backwards for a retraction and combined by Chan's
// formula for a merge): steadier than the sums of x and x² when the values are large
// and close together.
type variance struct {
	fn   planner.AggFunc
	n    []int64
	mean []float64
	m2   []float64
}

func newVariance(fn planner.AggFunc) *variance { return &variance{fn: fn} }

func (v *variance) grow(g int) {
	v.n, v.mean, v.m2 = growTo(v.n, g), growTo(v.mean, g), growTo(v.m2, g)
}

func (v *variance) update(groups []int32, signs []int8, col arrow.Array) error {
	if c, ok := col.(*array.Float64); ok && c.NullN() == 0 {
		vals := c.Float64Values()
		for i, g := range groups {
			if g < 0 {
				continue
			}
			if signs == nil || signs[i] > 0 {
				v.insert(g, vals[i])
			} else {
				v.retract(g, vals[i])
			}
		}
		return nil
	}
	return forEachRow(v, groups, signs, col)
}

func (v *variance) add(g int32, x value, sign int64) {
	if x.null {
		return
	}
	for ; sign > 0; sign-- {
		v.insert(g, x.f)
	}
	for ; sign < 0; sign++ {
		v.retract(g, x.f)
	}
}

func (v *variance) insert(g int32, x float64) {
	v.n[g]++
	d := x - v.mean[g]
	v.mean[g] += d / float64(v.n[g])
	v.m2[g] += d * (x - v.mean[g])
}

func (v *variance) retract(g int32, x float64) {
	v.n[g]--
	if v.n[g] <= 0 {
		// Nothing (or, after a retraction of what never came, less than nothing) is left:
		// start again from exact zeros rather than from rounding residue.
		v.mean[g], v.m2[g] = 0, 0
		return
	}
	d := x - v.mean[g]
	v.mean[g] -= d / float64(v.n[g])
	v.m2[g] -= d * (x - v.mean[g])
	if v.m2[g] < 0 {
		v.m2[g] = 0
	}
}

func (v *variance) result(g int32) value {
	n := v.n[g]
	var r float64
	switch v.fn {
	case planner.AggVarPop, planner.AggStddevPop:
		if n <= 0 {
			return value{null: true}
		}
		r = v.m2[g] / float64(n)
	default: // the sample variants have no value for one row (Flink: NULL)
		if n <= 1 {
			return value{null: true}
		}
		r = v.m2[g] / float64(n-1)
	}
	if v.fn == planner.AggStddevPop || v.fn == planner.AggStddevSamp {
		r = math.Sqrt(r)
	}
	return value{f: r}
}

func (v *variance) reset(g int32) { v.n[g], v.mean[g], v.m2[g] = 0, 0, 0 }

func (v *variance) merge(dst, src int32) {
	nb := v.n[src]
	if nb <= 0 {
		return
	}
	na := v.n[dst]
	if na <= 0 {
		v.n[dst], v.mean[dst], v.m2[dst] = nb, v.mean[src], v.m2[src]
		return
	}
	n := na + nb
	d := v.mean[src] - v.mean[dst]
	v.mean[dst] += d * float64(nb) / float64(n)
	v.m2[dst] += v.m2[src] + d*d*float64(na)*float64(nb)/float64(n)
	v.n[dst] = n
}

func (v *variance) save(dst []byte, g int32) []byte {
	dst = binary.AppendVarint(dst, v.n[g])
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.mean[g]))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.m2[g]))
}

func (v *variance) load(d *decoder, g int32) {
	v.n[g] = d.varint()
	v.mean[g] = math.Float64frombits(d.uint64())
	v.m2[g] = math.Float64frombits(d.uint64())
}
