package streamsql

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
)

func TestMaterializedAppliesChangelog(t *testing.T) {
	m := NewMaterialized(0, nil)
	m.Apply(exec.Insert, []string{"a", "1"})
	m.Apply(exec.Insert, []string{"b", "1"})
	m.Apply(exec.Insert, []string{"a", "1"}) // a second copy
	m.Apply(exec.UpdateBefore, []string{"b", "1"})
	m.Apply(exec.UpdateAfter, []string{"b", "2"})
	m.Apply(exec.Delete, []string{"a", "1"})  // the later copy goes
	m.Apply(exec.Delete, []string{"zz", "9"}) // no such row: nothing happens
	m.Apply(exec.Insert, []string{"x\x00y", ""})
	m.Apply(exec.Insert, []string{"x", "\x00y"}) // other cells, the same bytes joined
	want := [][]string{{"a", "1"}, {"b", "2"}, {"x\x00y", ""}, {"x", "\x00y"}}
	if got := m.Rows(); !reflect.DeepEqual(got, want) || m.Len() != 4 {
		t.Errorf("rows %q (%d), want %q", got, m.Len(), want)
	}
	m.Apply(exec.Delete, []string{"x", "\x00y"})
	if got := m.Window(1, 5); !reflect.DeepEqual(got, [][]string{{"b", "2"}, {"x\x00y", ""}}) {
		t.Errorf("window from the second row: %q", got)
	}
}

// Past its row bound, or its byte bound, the oldest rows go, and onDrop is told.
func TestMaterializedBounds(t *testing.T) {
	drops := 0
	m := NewMaterialized(3, func() { drops++ })
	for i := range 5 {
		m.Apply(exec.Insert, []string{fmt.Sprint(i)})
	}
	if got := m.Rows(); !reflect.DeepEqual(got, [][]string{{"2"}, {"3"}, {"4"}}) || drops != 2 {
		t.Errorf("rows %q after %d drops", got, drops)
	}
	m = NewMaterialized(0, nil)
	cell := strings.Repeat("x", 1<<16)
	for i := range 2000 {
		m.Apply(exec.Insert, []string{fmt.Sprint(i), cell})
	}
	if n := m.Len(); n >= 2000 || n < MaxResultBytes/(1<<16+rowOverhead+8)-1 {
		t.Errorf("%d rows of 64 KB kept, want as many as fit in %d MB", n, MaxResultBytes>>20)
	}
	if last := m.Window(m.Len()-1, 1); last[0][0] != "1999" {
		t.Errorf("the newest row is %s", last[0][0])
	}
}

// A million rows of Flink's datagen shape (a 19-digit id, a 100-character name, a
// double) stay within the byte bound: a table mode and a held result keep their
// process under 200 MB however long the query runs.
func TestMaterializedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a result with a million rows")
	}
	m := NewMaterialized(1_000_000, nil)
	name := strings.Repeat("n", 99)
	for i := range 1_000_000 {
		m.Apply(exec.Insert, []string{fmt.Sprint(1234567890123456789 + i), name + fmt.Sprint(i%10), "0.4217359806218512"})
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d rows kept, %d MB of heap", m.Len(), ms.HeapAlloc>>20)
	if ms.HeapAlloc > MaxResultBytes*5/4 {
		t.Errorf("%d MB of heap for a result bounded at %d MB", ms.HeapAlloc>>20, MaxResultBytes>>20)
	}
}
