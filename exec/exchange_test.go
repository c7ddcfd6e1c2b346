package exec

import "testing"

func TestKeyGroupRangeMatchesTaskOfKeyGroup(t *testing.T) {
	for p := 1; p <= MaxParallelism; p++ {
		for task := 0; task < p; task++ {
			first, last := KeyGroupRange(task, p)
			for kg := 0; kg < MaxParallelism; kg++ {
				if owns := kg >= first && kg <= last; owns != (TaskOfKeyGroup(kg, p) == task) {
					t.Fatalf("parallelism %d task %d: range [%d, %d] disagrees at key group %d", p, task, first, last, kg)
				}
			}
		}
	}
}
