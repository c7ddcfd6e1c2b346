package ops

import (
	"slices"

	"github.com/streamsql/streamsql/planner"
)

// groupKeys holds the aggregate's group keys, n values a group. Keys whose columns all
// hold integers (BIGINT, INT, BOOLEAN, DATE, TIME, TIMESTAMP) are kept as int64s and
// NULL flags: 9 bytes a value rather than a value's 56, and nothing the collector scans.
// q5's millions of window groups spent a tenth of its time growing and writing value
// slices otherwise.
type groupKeys struct {
	n       int
	ints    bool
	vals    []value // !ints
	i       []int64 // ints
	null    []bool  // ints
	scratch []value // what key returns when ints
}

func newGroupKeys(keys []int, in planner.Schema) groupKeys {
	return groupKeys{n: len(keys), ints: intKeys(keys, in), scratch: make([]value, len(keys))}
}

// intKeys reports whether every column of keys holds its values in value.i.
func intKeys(keys []int, in planner.Schema) bool {
	for _, k := range keys {
		switch in[k].Type.Kind {
		case planner.Int, planner.BigInt, planner.Boolean, planner.Date, planner.Time, planner.Timestamp, planner.TimestampLTZ, planner.IntervalDayTime:
		default:
			return false
		}
	}
	return true
}

// grow makes room for one more group.
func (k *groupKeys) grow() {
	if k.ints {
		k.i = slices.Grow(k.i, k.n)[:len(k.i)+k.n]
		k.null = slices.Grow(k.null, k.n)[:len(k.null)+k.n]
		return
	}
	k.vals = slices.Grow(k.vals, k.n)[:len(k.vals)+k.n]
}

// set makes key group g's key, its strings copied.
func (k *groupKeys) set(g int32, key []value) {
	at := int(g) * k.n
	for c, v := range key {
		if k.ints {
			k.i[at+c], k.null[at+c] = v.i, v.null
		} else {
			k.vals[at+c] = owned(v)
		}
	}
}

// key returns group g's key, valid until the next call: change it with setInt.
func (k *groupKeys) key(g int32) []value {
	at := int(g) * k.n
	if !k.ints {
		return k.vals[at : at+k.n]
	}
	for c := range k.scratch {
		k.scratch[c] = value{i: k.i[at+c], null: k.null[at+c]}
	}
	return k.scratch
}

// value returns column c of group g's key.
func (k *groupKeys) value(g int32, c int) value {
	at := int(g)*k.n + c
	if k.ints {
		return value{i: k.i[at], null: k.null[at]}
	}
	return k.vals[at]
}

// int returns column c of group g's key, an integer.
func (k *groupKeys) int(g int32, c int) int64 {
	if k.ints {
		return k.i[int(g)*k.n+c]
	}
	return k.vals[int(g)*k.n+c].i
}

// setInt changes column c of group g's key, an integer, to v.
func (k *groupKeys) setInt(g int32, c int, v int64) {
	if k.ints {
		k.i[int(g)*k.n+c] = v
		return
	}
	k.vals[int(g)*k.n+c].i = v
}
