package expr

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

func TestTake(t *testing.T) {
	types := []struct {
		t      planner.Type
		values []string // JSON values, with nulls
	}{
		{tBool, []string{"true", "false", "null", "true", "false", "true", "null", "false", "true", "true"}},
		{tInt, []string{"1", "-2", "null", "4", "5", "6", "null", "8", "9", "10"}},
		{tBig, []string{"1", "-2", "null", "4", "5", "6", "null", "8", "9", "10"}},
		{tDbl, []string{"1.5", "-2", "null", "4", "5", "6", "null", "8", "9", "10"}},
		{decT(20, 2), []string{`"1.50"`, `"-2.00"`, "null", `"123456789012345678.99"`, `"5"`, `"6"`, "null", `"8"`, `"9"`, `"10"`}},
		{tStr, []string{`"a"`, `""`, "null", `"ccc"`, `"dddd"`, `"é"`, "null", `"h"`, `"ii"`, `"j"`}},
		{tDate, []string{`"2024-01-01"`, `"1969-12-31"`, "null", `"2024-01-04"`, `"2024-01-05"`, `"2024-01-06"`, "null", `"2024-01-08"`, `"2024-01-09"`, `"2024-01-10"`}},
		{tTS, []string{`"2024-01-01 00:00:00.001"`, "2", "null", "4", "5", "6", "null", "8", "9", "10"}},
		{planner.TypeNull, []string{"null", "null", "null", "null", "null", "null", "null", "null", "null", "null"}},
	}
	sels := [][]int32{{}, {0}, {3, 4, 5, 6}, {9, 0, 2, 2, 7}, {1, 3, 5, 7, 9, 0, 2, 4, 6, 8}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
		{0, 1, 2, 5, 6, 9}, {2, 3, 4, 0, 1}, {7, 8, 9, 0}, {4, 5, 5, 6, 1, 2, 3}}
	for _, ty := range types {
		for _, offset := range []int{0, 3} {
			for _, sel := range sels {
				t.Run(fmt.Sprintf("%s/off%d/%v", ty.t, offset, sel), func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					// The input is the values after `offset` leading ones, sliced.
					var all []string
					for i := 0; i < offset; i++ {
						all = append(all, ty.values[len(ty.values)-1-i])
					}
					all = append(all, ty.values...)
					base := arrayOf(t, mem, ty.t, jsonList(all))
					defer base.Release()
					arr := array.NewSlice(base, int64(offset), int64(base.Len()))
					defer arr.Release()
					var want []string
					for _, i := range sel {
						want = append(want, ty.values[i])
					}
					exp := arrayOf(t, mem, ty.t, jsonList(want))
					defer exp.Release()
					got := exec.Take(dirtyAllocator{mem}, arr, sel)
					defer got.Release()
					if !sameValues(got, exp) {
						t.Fatalf("Take(%v) = %v, want %v", sel, got, exp)
					}
				})
			}
		}
	}
}

// jsonList joins JSON values into a JSON array.
func jsonList(vals []string) string {
	var raw []json.RawMessage
	for _, v := range vals {
		raw = append(raw, json.RawMessage(v))
	}
	if len(raw) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(raw)
	return string(b)
}

func TestTakeRecord(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := record(t, mem, sch("a", tInt, "s", tStr), `[{"a":1,"s":"x"},{"a":null,"s":"yy"},{"a":3,"s":null}]`)
	defer rec.Release()
	got := exec.TakeRecord(mem, rec, []int32{2, 0})
	defer got.Release()
	if got.NumRows() != 2 || got.NumCols() != 2 || !got.Schema().Equal(rec.Schema()) {
		t.Fatalf("TakeRecord = %v", got)
	}
	want := record(t, mem, sch("a", tInt, "s", tStr), `[{"a":3,"s":null},{"a":1,"s":"x"}]`)
	defer want.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("TakeRecord = %v, want %v", got, want)
	}
}
