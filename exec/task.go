package exec

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// message is what flows on a channel between tasks: a batch, a barrier, a watermark or
// end of input.
type message struct {
	batch       Batch
	barrier     int64 // > 0: the barrier of this checkpoint
	watermark   int64
	isWatermark bool
	idle        bool // the sender has had no input for its graph's IdleTimeout
	end         bool
	stopped     bool // with end: the input ended by a graceful stop without drain
}

// task runs one parallel instance of a stage: a reader or input channels, a chain of
// operators, and an exchange to the next stage. It owns barrier alignment and
// acknowledgements; operators only see batches, flushes and snapshot calls.
type task struct {
	id     TaskID
	cp     *Checkpointing
	reader Reader
	ops    []Operator
	chain  *Chain // ops, then the exchange
	inputs []chan message
	sides  []int    // by input channel: the input of the first operator it feeds
	ready  chan int // the index of an input channel for each message sent on it
	// pending are tokens of the ready queue taken and not yet acted on: those of inputs
	// that were blocked while aligning a barrier, once the alignment ended.
	pending  []int
	exchange *exchange
	metrics  *TaskMetrics
	lates    []LateCounter // by operator, nil where it counts no late rows
	// published: what publish added to the metrics so far, the reader's skipped
	// records first, then each operator's late rows.
	published []int64
	triggers  chan int64
	stops     chan bool // a source task's graceful stop: drain or not
	done      chan struct{}
	// stopped: the task's input ended by a graceful stop without drain, so the task
	// ends without telling its operators the input ended (nothing fires).
	stopped bool

	mu       sync.Mutex // guards finished: a finished task is snapshotted by the trigger loop
	finished bool
	closed   bool

	persisting sync.WaitGroup // snapshots being written in the background

	completed atomic.Int64 // the newest completed checkpoint
	committed int64        // the newest one the commit listeners were told of
	// completions wakes a source task held by watermark alignment to commit.
	completions chan struct{}

	dirty     bool // input arrived since the last flush
	clocked   bool // an operator follows the clock: flush at every poll (see Clocked)
	lastFlush time.Time
	now       time.Time // when the last batch was done (see head)
	watermark int64     // the last watermark given to the chain

	idleTimeout time.Duration // a source task with no input this long says it is idle
	lastInput   time.Time
	idle        bool // told the tasks it feeds that it is idle, and sent nothing since

	align *alignMember // a source task's place in its watermark alignment group, or nil
}

// trigger starts checkpoint id at this task: a source task emits the barrier, a task
// that already finished acknowledges with its final state, others wait for barriers.
func (t *task) trigger(ctx context.Context, id int64) {
	t.mu.Lock()
	if t.finished {
		defer t.mu.Unlock()
		state, pending, err := t.snapshot(ctx, id)
		for i, persist := range pending {
			if err == nil {
				state[i], err = persist()
			}
		}
		if err == nil {
			t.cp.Ack(t.id, id, state, t.stats(state, 0))
		} else if t.cp.Decline != nil {
			t.cp.Decline(t.id, id, err)
		}
		return
	}
	t.mu.Unlock()
	if t.reader == nil {
		return
	}
	select {
	case t.triggers <- id:
	case <-ctx.Done():
	case <-t.done:
	}
}

// stop asks a source task to stop gracefully; other tasks stop when their inputs do.
func (t *task) stop(ctx context.Context, drain bool) {
	if t.reader == nil {
		return
	}
	select {
	case t.stops <- drain:
	case <-ctx.Done():
	case <-t.done:
	}
}

// notifyComplete passes on that checkpoint id completed: a running task tells its
// commit listeners between batches, a finished one at once.
func (t *task) notifyComplete(ctx context.Context, id int64) error {
	for old := t.completed.Load(); id > old && !t.completed.CompareAndSwap(old, id); old = t.completed.Load() {
	}
	select {
	case t.completions <- struct{}{}:
	default: // a wake-up is pending already
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.finished {
		return nil
	}
	return t.commit(ctx)
}

// commit tells the reader and operators that listen of the newest completed checkpoint.
func (t *task) commit(ctx context.Context) error {
	id := t.completed.Load()
	if id <= t.committed {
		return nil
	}
	t.committed = id
	if l, ok := t.reader.(CommitListener); ok {
		if err := l.CheckpointComplete(ctx, id); err != nil {
			return err
		}
	}
	for _, op := range t.ops {
		if l, ok := op.(CommitListener); ok {
			if err := l.CheckpointComplete(ctx, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *task) run(ctx context.Context) error {
	defer close(t.done)
	t.lastFlush = time.Now()
	var err error
	if t.reader != nil {
		err = t.runSource(ctx)
	} else {
		err = t.runInputs(ctx)
	}
	if err == nil {
		t.mu.Lock()
		t.finished = true
		t.mu.Unlock()
	}
	return err
}

// head passes a batch that arrived on the first operator's input side to it, or
// straight to the exchange, and sets t.now to the time it is done. The time from
// start, when the batch arrived, is busy time, less what it spent back-pressured: one
// clock reading per batch, which the task's flush timing shares.
func (t *task) head(ctx context.Context, side int, b Batch, start time.Time) error {
	t.dirty = true
	m := t.metrics
	var blocked int64
	if m != nil {
		n := int64(b.Len())
		m.in += n
		if op := m.op(0); op != nil && side > 0 {
			op.in += n
		}
		blocked = m.blocked
	}
	var err error
	if side > 0 {
		err = t.ops[0].Process(ctx, side, b)
	} else {
		err = t.chain.Output(-1).Emit(ctx, b)
	}
	t.now = time.Now()
	if m != nil {
		m.busy += int64(t.now.Sub(start)) - (m.blocked - blocked)
	}
	return err
}

// publish makes what the task counted visible in its metrics, with the counts that
// readers and operators keep for themselves (skipped records, late rows); it runs on
// every flush and when the task closes, from the task's goroutine.
func (t *task) publish() {
	if t.metrics == nil {
		return
	}
	t.metrics.publish()
	if t.published == nil {
		t.published = make([]int64, 1+len(t.lates))
	}
	if sc, ok := t.reader.(SkipCounter); ok {
		n := sc.Skipped()
		t.metrics.Skipped.Add(n - t.published[0])
		t.published[0] = n
	}
	for i, lc := range t.lates {
		if lc != nil {
			if op := t.metrics.op(i); op != nil {
				n := lc.LateRows()
				op.LateRows.Add(n - t.published[i+1])
				t.published[i+1] = n
			}
		}
	}
}

// maybeIdle tells downstream tasks that this source task is idle once it has had no
// input for the idle timeout, so that its watermark no longer holds theirs back. Its
// next batch makes it active again.
func (t *task) maybeIdle(ctx context.Context) error {
	if t.idleTimeout <= 0 || t.idle || time.Since(t.lastInput) < t.idleTimeout {
		return nil
	}
	t.idle = true
	t.align.leave()
	if t.exchange == nil {
		return nil
	}
	return t.exchange.broadcast(ctx, message{idle: true})
}

// advance gives the chain a watermark later than the last one.
func (t *task) advance(ctx context.Context, wm int64) error {
	if wm <= t.watermark {
		return nil
	}
	t.watermark = wm
	if t.metrics != nil {
		t.metrics.Watermark.Store(wm)
	}
	return t.chain.Output(-1).EmitWatermark(ctx, wm)
}

func (t *task) runSource(ctx context.Context) error {
	defer t.align.leave()
	for {
		select {
		case id := <-t.triggers:
			if err := t.checkpoint(ctx, id, 0); err != nil {
				return err
			}
			continue
		case drain := <-t.stops:
			return t.stopSource(ctx, drain)
		default:
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := t.commit(ctx); err != nil {
			return err
		}
		if held := t.align.hold(); held != nil {
			// Ahead of its alignment group: pass on what is done and read nothing until
			// the group's watermark moves, while still taking checkpoints, commits and
			// stops.
			if err := t.flush(ctx); err != nil {
				return err
			}
			select {
			case <-held:
			case <-t.completions:
			case id := <-t.triggers:
				if err := t.checkpoint(ctx, id, 0); err != nil {
					return err
				}
			case drain := <-t.stops:
				return t.stopSource(ctx, drain)
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			continue
		}
		b, err := t.reader.Next(ctx)
		if err == io.EOF {
			t.align.leave()
			if err := t.advance(ctx, MaxWatermark); err != nil {
				return err
			}
			return t.finish(ctx)
		}
		if err != nil {
			return err
		}
		if b.Rec == nil {
			if err := t.flush(ctx); err != nil {
				return err
			}
			if err := t.maybeIdle(ctx); err != nil {
				return err
			}
			continue
		}
		t.lastInput, t.idle = time.Now(), false
		err = t.head(ctx, 0, b, t.lastInput)
		b.Release()
		if err != nil {
			return err
		}
		t.align.report()
		if err := t.maybeFlush(ctx); err != nil {
			return err
		}
	}
}

// stopSource ends a source task at a graceful stop: with drain, event time first
// advances to the end, so that every window fires.
func (t *task) stopSource(ctx context.Context, drain bool) error {
	t.align.leave()
	if err := t.takeTheRest(ctx); err != nil {
		return err
	}
	if drain {
		if err := t.advance(ctx, MaxWatermark); err != nil {
			return err
		}
	} else {
		t.stopped = true
	}
	return t.finish(ctx)
}

// takeTheRest passes on, at a graceful stop, what a Stopper had taken from its system.
func (t *task) takeTheRest(ctx context.Context) error {
	s, ok := t.reader.(Stopper)
	if !ok {
		return nil
	}
	s.Stop()
	for {
		b, err := t.reader.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b.Rec == nil {
			continue
		}
		err = t.head(ctx, 0, b, time.Now())
		b.Release()
		if err != nil {
			return err
		}
	}
}

// runInputs reads the input channels, aligning barriers when exactly-once.
func (t *task) runInputs(ctx context.Context) error {
	n := len(t.inputs)
	blocked := make([]bool, n) // delivered the barrier being aligned (exactly-once)
	seen := make([]bool, n)    // delivered the barrier being aligned
	covered, seenN := 0, 0     // inputs that delivered it or ended; that delivered it
	wms := newValve(n)
	live := n
	var aligning int64 // the checkpoint being aligned, or 0
	var alignStart time.Time
	tick := time.NewTicker(flushInterval)
	defer tick.Stop()
	// Each message sent on an input channel puts the channel's index into the ready
	// queue, so one receive tells which input to read, whatever the number of inputs.
	// The token of an input blocked by alignment waits in deferred, and its message in
	// its channel, until the alignment ends.
	var deferred []int
	unblock := func() {
		clear(blocked)
		t.pending = append(t.pending, deferred...)
		deferred = deferred[:0]
	}
	for live > 0 {
		if err := t.commit(ctx); err != nil {
			return err
		}
		var in int
		if len(t.pending) > 0 {
			in, t.pending = t.pending[0], t.pending[1:]
		} else {
			select {
			case in = <-t.ready:
			default:
				in = -1
			}
		}
		if in < 0 { // nothing waiting: wait for input, the flush tick or the end
			select {
			case in = <-t.ready:
			case <-tick.C:
				if err := t.flush(ctx); err != nil {
					return err
				}
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if blocked[in] {
			deferred = append(deferred, in)
			continue
		}
		m := <-t.inputs[in] // its token came after it
		switch {
		case m.isWatermark:
			wms.watermark(in, m.watermark)
			t.idle = false
			if err := t.advance(ctx, wms.combined()); err != nil {
				return err
			}
			continue
		case m.idle:
			wms.markIdle(in)
			if err := t.advance(ctx, wms.combined()); err != nil {
				return err
			}
			if err := t.passIdle(ctx, wms); err != nil {
				return err
			}
			continue
		case m.end:
			if !seen[in] && !wms.ended[in] {
				covered++
			}
			wms.end(in)
			live--
			if m.stopped {
				t.stopped = true
			}
			if !t.stopped {
				if err := t.advance(ctx, wms.combined()); err != nil {
					return err
				}
			}
		case m.barrier > 0:
			if m.barrier < aligning {
				continue // a barrier of a checkpoint this task already abandoned
			}
			if m.barrier > aligning {
				// A newer checkpoint overtakes one still aligning: that one is abandoned.
				aligning, alignStart = m.barrier, time.Now()
				clear(seen)
				covered, seenN = n-wms.open, 0
				unblock()
			}
			if !seen[in] {
				seen[in] = true
				seenN++
				if !wms.ended[in] {
					covered++
				}
			}
			blocked[in] = t.cp.Aligned
		default:
			wms.activate(in)
			t.idle = false
			var start time.Time
			if t.metrics != nil {
				start = time.Now()
			}
			err := t.head(ctx, t.sides[in], m.batch, start)
			m.batch.Release()
			if err != nil {
				return err
			}
			if t.inputIdle() && t.now.Sub(t.lastFlush) >= idleFlushGap {
				err = t.flush(ctx)
			} else {
				err = t.maybeFlush(ctx)
			}
			if err != nil {
				return err
			}
			continue
		}
		// A barrier or an end may complete the alignment: every live input delivered it.
		if aligning > 0 && covered == n && seenN > 0 {
			stats := TaskStats{AlignmentNanos: int64(time.Since(alignStart))}
			if err := t.checkpoint(ctx, aligning, stats.AlignmentNanos); err != nil {
				return err
			}
			aligning = 0
			clear(seen)
			covered, seenN = n-wms.open, 0
			unblock()
		}
	}
	return t.finish(ctx)
}

// passIdle tells the tasks this one feeds that it is idle once all its open inputs
// are, so that idleness reaches past exchanges. Its next batch or watermark, which
// comes after one of its inputs is active again, makes it active.
func (t *task) passIdle(ctx context.Context, wms *valve) error {
	if t.idle || t.exchange == nil || !wms.allIdle() {
		return nil
	}
	t.idle = true
	return t.exchange.broadcast(ctx, message{idle: true})
}

// checkpoint snapshots the task for checkpoint id: operators emit what they hold back,
// then capture their state, the barrier goes downstream, and the coordinator gets the
// states once they are persisted (in the background for AsyncSnapshotters).
func (t *task) checkpoint(ctx context.Context, id int64, alignNanos int64) error {
	if err := t.flushAll(ctx); err != nil {
		return err
	}
	state, pending, err := t.snapshot(ctx, id)
	if err != nil {
		return err
	}
	if t.exchange != nil {
		if err := t.exchange.broadcast(ctx, message{barrier: id}); err != nil {
			return err
		}
	}
	if t.cp.Ack == nil {
		return nil
	}
	stats := t.stats(state, alignNanos)
	if len(pending) == 0 {
		t.cp.Ack(t.id, id, state, stats)
		return nil
	}
	t.persisting.Add(1)
	go func() {
		defer t.persisting.Done()
		for i, persist := range pending {
			st, err := persist()
			if err != nil {
				if t.cp.Decline != nil {
					t.cp.Decline(t.id, id, err)
				}
				return
			}
			state[i] = st
		}
		t.cp.Ack(t.id, id, state, stats)
	}()
	return nil
}

// stats sums the sizes of a snapshot.
func (t *task) stats(state [][]byte, alignNanos int64) TaskStats {
	s := TaskStats{AlignmentNanos: alignNanos}
	for _, st := range state {
		s.BytesWritten += int64(len(st))
	}
	first := len(state) - len(t.ops) // the reader's state comes first
	if first == 1 && t.metrics != nil {
		t.metrics.ReaderStateBytes.Store(int64(len(state[0])))
	}
	for i, op := range t.ops {
		var size int64
		if j := first + i; j >= 0 && j < len(state) {
			size = int64(len(state[j]))
		}
		if m, ok := op.(SnapshotMeter); ok {
			b, k := m.LastSnapshot()
			s.BytesWritten += b
			s.KeysChanged += k
			size += b
		}
		if om := t.metrics.op(i); om != nil {
			om.StateBytes.Store(size)
		}
	}
	return s
}

// snapshot collects the state of the reader (source tasks) and of every operator; for
// an AsyncSnapshotter it returns, by its index in the state, what persists it.
func (t *task) snapshot(ctx context.Context, id int64) ([][]byte, map[int]func() ([]byte, error), error) {
	var state [][]byte
	var pending map[int]func() ([]byte, error)
	add := func(x any) error {
		var s []byte
		var err error
		switch sn := x.(type) {
		case AsyncSnapshotter:
			persist, err := sn.SnapshotAsync(ctx, id)
			if err != nil {
				return err
			}
			if pending == nil {
				pending = map[int]func() ([]byte, error){}
			}
			pending[len(state)] = persist
		case Snapshotter:
			if s, err = sn.Snapshot(ctx, id); err != nil {
				return err
			}
		}
		state = append(state, s)
		return nil
	}
	if t.reader != nil {
		if err := add(t.reader); err != nil {
			return nil, nil, err
		}
	}
	for _, op := range t.ops {
		if err := add(op); err != nil {
			return nil, nil, err
		}
	}
	return state, pending, nil
}

// inputIdle reports whether no input has a message waiting: operators that hold back
// output emit it then, so a trickle of input is not delayed and a flood is folded.
func (t *task) inputIdle() bool {
	return len(t.ready) == 0 && len(t.pending) == 0
}

// maybeFlush flushes when the flush interval passed under continuous input.
func (t *task) maybeFlush(ctx context.Context) error {
	if t.now.Sub(t.lastFlush) < flushInterval {
		return nil
	}
	return t.flush(ctx)
}

// flush asks the operators to emit what they hold back, if input arrived since the last.
func (t *task) flush(ctx context.Context) error {
	if !t.dirty && !t.clocked {
		return nil
	}
	return t.flushAll(ctx)
}

func (t *task) flushAll(ctx context.Context) error {
	t.dirty, t.lastFlush = false, time.Now()
	if m := t.metrics; m != nil {
		start, blocked := t.lastFlush, m.blocked
		defer func() {
			m.busy += int64(time.Since(start)) - (m.blocked - blocked)
			t.publish()
		}()
	}
	for _, op := range t.ops {
		if f, ok := op.(Flusher); ok {
			if err := f.Flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish tells the operators, upstream first, that the input ended, and passes the end
// on. After a graceful stop without drain, the operators only flush: the input did not
// end, so what waits for more of it (open windows, a sink's last commit) stays in their
// state for the final checkpoint.
func (t *task) finish(ctx context.Context) error {
	if t.stopped {
		if err := t.flushAll(ctx); err != nil {
			return err
		}
		if t.exchange != nil {
			return t.exchange.broadcast(ctx, message{end: true, stopped: true})
		}
		return nil
	}
	for _, op := range t.ops {
		if f, ok := op.(Finisher); ok {
			if err := f.Finish(ctx); err != nil {
				return err
			}
		}
	}
	if t.exchange != nil {
		return t.exchange.broadcast(ctx, message{end: true})
	}
	return nil
}

// close releases the reader and operators once; it runs after every task stopped.
func (t *task) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	t.closed = true
	t.persisting.Wait()
	t.publish()
	var errs []error
	if t.reader != nil {
		if sn, ok := t.reader.(Snapshotter); ok && t.cp.Positions != nil {
			if pos, err := sn.Snapshot(context.Background(), 0); err == nil {
				t.cp.Positions(t.id, pos)
			}
		}
		errs = append(errs, t.reader.Close())
	}
	for _, op := range t.ops {
		if c, ok := op.(Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	if t.exchange != nil {
		t.exchange.pool.Close() // what downstream still holds goes back to the allocator
	}
	// Drain what upstream tasks left in the channels.
	for _, ch := range t.inputs {
		for {
			select {
			case m := <-ch:
				m.batch.Release()
				continue
			default:
			}
			break
		}
	}
	return errors.Join(errs...)
}

// flushInterval bounds how long a Flusher may hold back results under continuous input.
// When the input goes idle, a task flushes sooner, but not more often than idleFlushGap,
// so that a fast consumer of a slower producer still folds several batches together.
const (
	flushInterval = 50 * time.Millisecond
	idleFlushGap  = 10 * time.Millisecond
)
