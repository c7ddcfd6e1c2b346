package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// watermarkAssigner passes rows on, then the watermark they imply: the greatest value
// of the table's WATERMARK expression so far. Its snapshot is that watermark, so a
// restored job does not take back what event time reached.
type watermarkAssigner struct {
	mem       memory.Allocator
	expr      expr.Evaluator
	text      string // the WATERMARK expression as written, for errors
	out       exec.WatermarkOutput
	watermark int64
	lag       int64 // how far the watermark stays behind the latest time: 1 ms for processing time
	clock     func() time.Time
	// splits holds the watermark each split of a source task implies (see exec.Splits);
	// it starts at the watermark, so a restored or rescaled job goes on from there.
	splits []int64
	align  exec.Alignment // the source's watermark alignment group, if any
}

var (
	_ exec.WatermarkHandler = (*watermarkAssigner)(nil)
	_ exec.Snapshotter      = (*watermarkAssigner)(nil)
	_ exec.Restorer         = (*watermarkAssigner)(nil)
	_ exec.WatermarkAligned = (*watermarkAssigner)(nil)
)

// NewWatermarkAssigner returns the operator of a plan's WatermarkAssigner, in align's
// watermark alignment group when it names one (event time only: a processing-time
// watermark follows the clock, which every task shares).
func NewWatermarkAssigner(mem memory.Allocator, env *expr.Env, n *planner.WatermarkAssigner, align exec.Alignment, out exec.Output) (exec.Operator, error) {
	ev, err := expr.Compile(n.Expr, mem, env)
	if err != nil {
		return nil, err
	}
	w := &watermarkAssigner{mem: mem, expr: ev, text: n.SQL, out: out.(exec.WatermarkOutput), watermark: exec.MinWatermark}
	if n.Proctime {
		w.lag, w.clock = 1, time.Now
		if env != nil && env.Now != nil {
			w.clock = env.Now
		}
		return &proctimeAssigner{w}, nil
	}
	w.align = align
	return w, nil
}

// proctimeAssigner is the watermark assigner of a processing-time attribute: its
// watermark also follows the clock when no rows come (Flush), so that windows close on
// time. It stays a millisecond behind, as rows stamped in the same millisecond may come.
// Over an event-time stream (a table with a WATERMARK and a PROCTIME() column) it
// replaces the stream's watermark by the clock: of the watermarks it receives it
// passes on only the end of input.
type proctimeAssigner struct{ *watermarkAssigner }

var _ exec.Clocked = proctimeAssigner{}

func (proctimeAssigner) Clocked() {}

func (p proctimeAssigner) Flush(ctx context.Context) error {
	return p.watermarkAssigner.ProcessWatermark(ctx, p.clock().UnixMilli()-p.lag)
}

// ProcessWatermark passes on the end of input only: event time is not this stream's.
func (p proctimeAssigner) ProcessWatermark(ctx context.Context, wm int64) error {
	if wm != exec.MaxWatermark {
		return nil
	}
	return p.watermarkAssigner.ProcessWatermark(ctx, wm)
}

func (w *watermarkAssigner) Process(ctx context.Context, _ int, b exec.Batch) error {
	if err := w.out.Emit(ctx, b); err != nil {
		return err
	}
	col, err := w.expr.Eval(b.Rec)
	if err != nil {
		return evalError(w.mem, "WatermarkAssigner", w.text, b, err, func(rec arrow.Record) error {
			col, err := w.expr.Eval(rec)
			if col != nil {
				col.Release()
			}
			return err
		})
	}
	defer col.Release()
	ts := col.(*array.Timestamp)
	var wm int64
	if b.Splits != nil && w.lag == 0 { // not processing time, whose stamps are the clock's
		wm = w.splitWatermark(ts, b.Splits)
	} else {
		wm = w.watermark
		for i, v := range ts.TimestampValues() {
			if int64(v) > wm && ts.IsValid(i) {
				wm = int64(v)
			}
		}
		if wm != exec.MinWatermark {
			wm -= w.lag
		}
	}
	if wm <= w.watermark {
		return nil
	}
	w.watermark = wm
	return w.out.EmitWatermark(ctx, wm)
}

// splitWatermark notes the greatest time of each split in a batch and returns the
// least over the splits that hold the watermark back, or the greatest when none does.
func (w *watermarkAssigner) splitWatermark(ts *array.Timestamp, s *exec.Splits) int64 {
	for len(w.splits) < len(s.Holding) {
		w.splits = append(w.splits, w.watermark)
	}
	for i, v := range ts.TimestampValues() {
		if sp := s.Of[i]; int64(v) > w.splits[sp] && ts.IsValid(i) {
			w.splits[sp] = int64(v)
		}
	}
	least, greatest, held := int64(exec.MaxWatermark), int64(exec.MinWatermark), false
	for i, h := range s.Holding {
		if h {
			least, held = min(least, w.splits[i]), true
		}
		greatest = max(greatest, w.splits[i])
	}
	if held {
		return least
	}
	return greatest
}

// ProcessWatermark passes on the end of event time at the end of the input.
func (w *watermarkAssigner) ProcessWatermark(ctx context.Context, wm int64) error {
	if wm <= w.watermark {
		return nil
	}
	w.watermark = wm
	return w.out.EmitWatermark(ctx, wm)
}

func (w *watermarkAssigner) WatermarkAlignment() exec.Alignment { return w.align }
func (w *watermarkAssigner) CurrentWatermark() int64            { return w.watermark }

func (w *watermarkAssigner) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(w.watermark)
}

func (w *watermarkAssigner) Restore(state []byte) error {
	if err := json.Unmarshal(state, &w.watermark); err != nil {
		return fmt.Errorf("watermark assigner state: %w", err)
	}
	return nil
}

// windowAssigner adds window_start, window_end and window_time to each row, one row per
// window the row belongs to. Rows without a time belong to no window and are dropped.
type windowAssigner struct {
	mem    memory.Allocator
	w      *planner.WindowTVF
	schema *arrow.Schema
	out    exec.Output

	sel                []int32
	starts, ends, time []int64
}

// NewWindowAssigner returns the operator of a plan's WindowTVF.
func NewWindowAssigner(mem memory.Allocator, w *planner.WindowTVF, out exec.Output) exec.Operator {
	return &windowAssigner{mem: mem, w: w, schema: exec.ArrowSchema(w.Schema()), out: out}
}

// windowStart is the start of the window of size that holds t, aligned to offset.
func windowStart(t, offset, size int64) int64 {
	r := (t - offset) % size
	if r < 0 {
		r += size
	}
	return t - r
}

func (a *windowAssigner) Process(ctx context.Context, _ int, b exec.Batch) error {
	ts := b.Rec.Column(a.w.TimeCol).(*array.Timestamp)
	a.sel, a.starts, a.ends = a.sel[:0], a.starts[:0], a.ends[:0]
	w := a.w
	for i, v := range ts.TimestampValues() {
		if ts.IsNull(i) {
			continue
		}
		t := int64(v)
		switch w.Kind {
		case "TUMBLE":
			start := windowStart(t, w.Offset, w.Size)
			a.add(i, start, start+w.Size)
		case "SESSION": // its aggregate merges the sessions that overlap
			a.add(i, t, t+w.Size)
		case "HOP":
			for start := windowStart(t, w.Offset, w.Slide); start > t-w.Size; start -= w.Slide {
				a.add(i, start, start+w.Size)
			}
		case "CUMULATE":
			start := windowStart(t, w.Offset, w.Size)
			for end := windowStart(t, w.Offset, w.Slide) + w.Slide; end <= start+w.Size; end += w.Slide {
				a.add(i, start, end)
			}
		}
	}
	if len(a.sel) == 0 {
		return nil
	}
	in := b.Rec
	if len(a.sel) != int(in.NumRows()) || !identity(a.sel) {
		in = exec.TakeRecord(a.mem, b.Rec, a.sel)
		defer in.Release()
	}
	cols := append([]arrow.Array(nil), in.Columns()...)
	a.time = a.time[:0]
	for _, e := range a.ends {
		a.time = append(a.time, e-1)
	}
	var extra []arrow.Array
	for i, vals := range [][]int64{a.starts, a.ends, a.time} {
		bld := array.NewTimestampBuilder(a.mem, a.schema.Field(len(cols)+i).Type.(*arrow.TimestampType))
		bld.Reserve(len(vals))
		for _, v := range vals {
			bld.UnsafeAppend(arrow.Timestamp(v))
		}
		extra = append(extra, bld.NewArray())
		bld.Release()
	}
	defer func() {
		for _, c := range extra {
			c.Release()
		}
	}()
	rec := array.NewRecord(a.schema, append(cols, extra...), int64(len(a.sel)))
	defer rec.Release()
	return a.out.Emit(ctx, exec.Batch{Rec: rec})
}

func (a *windowAssigner) add(row int, start, end int64) {
	a.sel = append(a.sel, int32(row))
	a.starts = append(a.starts, start)
	a.ends = append(a.ends, end)
}

func identity(sel []int32) bool {
	for i, s := range sel {
		if int(s) != i {
			return false
		}
	}
	return true
}

// RescaleWatermarks returns the snapshots of watermark assigners restored at another
// parallelism, tasks: each starts at the least watermark of the old tasks, so none
// declares a time final that an old task had not.
func RescaleWatermarks(old [][]byte, tasks int) ([][]byte, error) {
	least := int64(exec.MaxWatermark)
	for i, data := range old {
		var wm int64
		if err := json.Unmarshal(data, &wm); err != nil {
			return nil, fmt.Errorf("watermark assigner state of task %d: %w", i, err)
		}
		least = min(least, wm)
	}
	data, _ := json.Marshal(least)
	out := make([][]byte, tasks)
	for i := range out {
		out[i] = data
	}
	return out, nil
}
