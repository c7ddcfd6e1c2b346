package expr

import (
	"testing"

	"github.com/streamsql/streamsql/planner"
)

// TestKernelsMatchTable checks that every row of planner's function table has a kernel
// here and every kernel a row.
func TestKernelsMatchTable(t *testing.T) {
	rows := map[planner.Func]bool{}
	for _, f := range planner.Functions() {
		rows[f.Fn] = true
		if _, ok := kernels[f.Fn]; !ok {
			t.Errorf("%s has a row in planner's function table but no kernel", f.Fn)
		}
	}
	for fn := range kernels {
		if !rows[fn] {
			t.Errorf("%s has a kernel but no row in planner's function table", fn)
		}
	}
}
