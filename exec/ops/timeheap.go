package ops

// timed is an entry waiting for the watermark: its time, its arrival order, and what
// it stands for (a partition or key with pending rows).
type timed[P any] struct {
	t, seq int64
	p      P
}

// timeHeap is a min-heap of waiting entries by time, then arrival: the buffering
// operators (OVER, MATCH_RECOGNIZE, the temporal join) take from it what the watermark
// passed, in time order.
type timeHeap[P any] []timed[P]

func (h timeHeap[P]) less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].seq < h[j].seq
}

func (h *timeHeap[P]) push(e timed[P]) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *timeHeap[P]) pop() timed[P] {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = timed[P]{}
	q = q[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q.less(l, small) {
			small = l
		}
		if r < len(q) && q.less(r, small) {
			small = r
		}
		if small == i {
			break
		}
		q[i], q[small] = q[small], q[i]
		i = small
	}
	*h = q
	return top
}
