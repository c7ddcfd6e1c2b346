package ops

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// match is the operator of a plan's MatchRecognize. Rows wait in their partition's
// pending rows for the watermark; then each partition's ready rows are taken in time
// order (for equal times by the further ORDER BY keys, then by arrival) and fed, one at
// a time, to its partial matches (threads of the pattern's program): every row starts
// a thread, and a thread at a variable whose DEFINE condition holds for the row moves
// on. A greedy quantifier that takes the row does not also let it go to what follows
// (Flink's rule), a reluctant one lets both happen, the exit first. A thread that reaches the end of the program is a
// match: one output row, its measures computed over its rows, after which the AFTER
// MATCH strategy drops the threads that may no longer start a match. WITHIN drops a
// thread once a row comes more than the interval after its first row.
//
// A row at or before the watermark, or at or before the time of the last row its
// partition took, is late, as in Flink: dropped and counted. A partition keeps the rows
// of its oldest thread onwards only.
type match struct {
	n        *planner.MatchRecognize
	mem      memory.Allocator
	width    int
	prog     []planner.MatchInstr
	reach    [][]int // per instruction: the variables reachable without a row
	conds    []*navEval
	measures *navEval
	meas     []expr.Evaluator
	part     *changes // the partition columns of output rows
	outT     *arrow.Schema
	order    rank // compares rows of equal time by the ORDER BY keys after the time

	out       exec.Output
	parts     map[string]*matchPart
	pending   timeHeap[*matchPart]
	seq       int64
	watermark int64
	late      int64
	matches   int // output rows built, not yet emitted

	state     *KeyedState
	dirty     []*matchPart
	lastBytes int64
	lastKeys  int64

	hashes  []uint64
	keyBuf  []byte
	scratch []value
	ok      []bool // per thread and variable: whether its condition holds for the row
	seen    []bool
	end     []bool // per instruction: whether the program ends there without another row
	next    []*mthread
	done    []*mthread
}

// matchPart is one partition: its rows waiting for the watermark, the rows its threads
// still read (rows[0] is row number base), its threads, oldest start first, and its
// completed matches that wait for older partial matches.
type matchPart struct {
	enc     string
	kg      uint16
	last    int64 // the time of the last row taken; math.MinInt64 before any
	pending []*overRow
	rows    []*overRow
	base    int64 // the number of rows[0]
	taken   int64 // the number the next row taken gets
	threads []*mthread
	done    []*mthread // matches waiting for partial matches that started before them
	dirty   bool
}

// mthread is a partial match: it started at row number start, has mapped the rows
// since to the variables in path, and goes on at instruction pc.
type mthread struct {
	start int64
	pc    int
	path  *mstep
}

// mstep is one row's variable in a thread's path, linked to the row before: threads
// that branch share their past.
type mstep struct {
	v    int
	n    int // the steps up to this one
	prev *mstep
}

// vars returns the path's variables, first row first.
func (s *mstep) vars() []int {
	if s == nil {
		return nil
	}
	out := make([]int, s.n)
	for p := s; p != nil; p = p.prev {
		out[p.n-1] = p.v
	}
	return out
}

var (
	_ exec.Operator         = (*match)(nil)
	_ exec.WatermarkHandler = (*match)(nil)
	_ exec.LateCounter      = (*match)(nil)
	_ exec.Closer           = (*match)(nil)
)

// NewMatch returns the operator of a plan's MatchRecognize node; ks is where it keeps
// its checkpointed state (nil without checkpoints).
func NewMatch(mem memory.Allocator, env *expr.Env, n *planner.MatchRecognize, out exec.Output, ks *KeyedState) (exec.Operator, error) {
	in := n.Input.Schema()
	m := &match{n: n, mem: mem, width: len(in), prog: n.Program, out: out, parts: map[string]*matchPart{},
		watermark: exec.MinWatermark, state: ks}
	m.reach = reachableVars(n.Program)
	inT := exec.ArrowSchema(in)
	for _, k := range n.OrderBy {
		m.order.order = append(m.order.order, rankKey{col: k.Col, desc: k.Desc, less: less(inT.Field(k.Col).Type.ID())})
	}
	m.conds = make([]*navEval, len(n.Vars))
	for v, cond := range n.Defines {
		if cond == nil {
			continue
		}
		e, err := newNavEval(mem, in, n.DefineNavs[v])
		if err != nil {
			return nil, err
		}
		if e.pred, err = expr.CompilePredicate(cond, mem, env); err != nil {
			return nil, fmt.Errorf("DEFINE %s: %w", n.Vars[v], err)
		}
		m.conds[v] = e
	}
	var err error
	if m.measures, err = newNavEval(mem, in, n.MeasureNavs); err != nil {
		return nil, err
	}
	for i, e := range n.Measures {
		ev, err := expr.Compile(e, mem, env)
		if err != nil {
			return nil, fmt.Errorf("measure %s: %w", n.Names[i], err)
		}
		m.meas = append(m.meas, ev)
	}
	var ps planner.Schema
	for _, c := range n.PartitionBy {
		ps = append(ps, in[c])
	}
	m.part = newChanges(mem, ps)
	m.outT = exec.ArrowSchema(n.Schema())
	m.scratch = make([]value, m.width)
	m.seen = make([]bool, len(m.prog))
	m.end = make([]bool, len(m.prog))
	for pc := range m.prog {
		m.end[pc] = reachesEnd(m.prog, pc)
	}
	return m, nil
}

// reachableVars lists, for each instruction, the variables its thread could map the
// next row to.
func reachableVars(prog []planner.MatchInstr) [][]int {
	out := make([][]int, len(prog))
	for from := range prog {
		seen := make([]bool, len(prog))
		var walk func(pc int)
		walk = func(pc int) {
			if seen[pc] {
				return
			}
			seen[pc] = true
			switch in := prog[pc]; in.Op {
			case planner.OpVar:
				if !slices.Contains(out[from], in.Var) {
					out[from] = append(out[from], in.Var)
				}
			case planner.OpJump:
				walk(in.X)
			case planner.OpSplit:
				walk(in.X)
				walk(in.Y)
			}
		}
		walk(from)
	}
	return out
}

// Process puts a batch's rows into their partitions' pending rows.
func (m *match) Process(_ context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	reads, err := readers(b.Rec, allColumns(m.width), nil)
	if err != nil {
		return err
	}
	m.hashes = exec.HashRows(b.Rec, m.n.PartitionBy, m.hashes[:0])
	row := m.scratch
	for i := 0; i < n; i++ {
		if b.Kind(i).IsRetraction() {
			return fmt.Errorf("%s reads insert-only input, got a %s row", m, b.Kind(i))
		}
		for c, read := range reads {
			row[c] = read(i)
		}
		t := row[m.n.TimeCol]
		if t.null {
			continue
		}
		p := m.partition(row, uint16(exec.KeyGroup(m.hashes[i])))
		if t.i <= p.last || t.i <= m.watermark {
			m.late++
			continue
		}
		x := &overRow{t: t.i, seq: m.seq, vals: ownedRow(row)}
		m.seq++
		m.addPending(p, x)
		m.markDirty(p)
	}
	return nil
}

func (m *match) partition(row []value, kg uint16) *matchPart {
	m.keyBuf = m.keyBuf[:0]
	for _, c := range m.n.PartitionBy {
		m.keyBuf = appendValueBytes(m.keyBuf, row[c])
	}
	if p := m.parts[string(m.keyBuf)]; p != nil {
		return p
	}
	p := &matchPart{enc: string(m.keyBuf), kg: kg, last: math.MinInt64}
	m.parts[p.enc] = p
	return p
}

// addPending puts x among p's pending rows, after those before it or tied with it.
func (m *match) addPending(p *matchPart, x *overRow) {
	if k := len(p.pending); k == 0 || !m.before(x, p.pending[k-1]) {
		p.pending = append(p.pending, x)
	} else {
		at := sort.Search(k, func(i int) bool { return m.before(x, p.pending[i]) })
		p.pending = slices.Insert(p.pending, at, x)
	}
	m.pending.push(timed[*matchPart]{t: x.t, seq: x.seq, p: p})
}

// before reports whether row x comes before row y: by time, then, for equal times, by
// the further ORDER BY keys.
func (m *match) before(x, y *overRow) bool {
	return x.t < y.t || x.t == y.t && len(m.order.order) > 0 && m.order.compare(x.vals, y.vals) < 0
}

// ProcessWatermark feeds the rows the watermark passed to their partitions' threads in
// time order, emits the matches, and passes the watermark on.
func (m *match) ProcessWatermark(ctx context.Context, wm int64) error {
	m.watermark = max(m.watermark, wm)
	for len(m.pending) > 0 && m.pending[0].t <= m.watermark {
		e := m.pending.pop()
		p := e.p
		x := p.pending[0]
		p.pending = dropFront(p.pending, 1)
		if err := m.take(p, x); err != nil {
			m.part.discard()
			m.measures.b.discard()
			m.matches = 0
			return err
		}
		m.markDirty(p)
		if m.matches >= overBatchRows {
			if err := m.emit(ctx); err != nil {
				return err
			}
		}
	}
	if m.n.Within > 0 && m.watermark < math.MaxInt64 {
		for _, p := range m.parts {
			if n := len(p.threads); n > 0 {
				if m.expire(p, m.watermark+1); len(p.threads) != n {
					m.markDirty(p)
				}
			}
		}
	}
	if err := m.emit(ctx); err != nil {
		return err
	}
	return m.out.(exec.WatermarkOutput).EmitWatermark(ctx, wm)
}

// expire drops the threads of p that a row at time t may no longer extend.
func (m *match) expire(p *matchPart, t int64) {
	if m.n.Within <= 0 || len(p.threads) == 0 {
		return
	}
	kept := p.threads[:0]
	for _, th := range p.threads {
		if t-p.rows[th.start-p.base].t <= m.n.Within {
			kept = append(kept, th)
		}
	}
	clear(p.threads[len(kept):])
	p.threads = kept
	m.trim(p)
}

// take feeds row x to p's threads and to a new one starting at it, and builds the
// output rows of the matches it completes.
func (m *match) take(p *matchPart, x *overRow) error {
	p.last = x.t
	m.expire(p, x.t)
	if len(p.rows) == 0 {
		p.base = p.taken
	}
	p.rows = append(p.rows, x)
	p.taken++
	p.threads = append(p.threads, &mthread{start: p.taken - 1, pc: 0})
	if err := m.evalConds(p, x); err != nil {
		return err
	}
	nv := len(m.n.Vars)
	m.next, m.done = m.next[:0], m.done[:0]
	for i, th := range p.threads {
		clear(m.seen)
		ok := m.ok[i*nv : (i+1)*nv]
		m.follow(th, th.pc, ok)
	}
	clear(p.threads)
	p.threads = p.threads[:0]
	for _, th := range m.next {
		if m.prog[th.pc].Op != planner.OpMatch {
			p.threads = append(p.threads, th)
		}
	}
	for _, d := range m.done {
		at := sort.Search(len(p.done), func(i int) bool { return p.done[i].start > d.start })
		p.done = slices.Insert(p.done, at, d)
	}
	if err := m.emitReady(p); err != nil {
		return err
	}
	m.trim(p)
	return nil
}

// emitReady builds the output rows of p's completed matches, earliest start first, as
// long as no partial match started before them (it might still complete, and come
// first), each match dropping the threads and matches its AFTER MATCH strategy skips.
func (m *match) emitReady(p *matchPart) error {
	for len(p.done) > 0 {
		d := p.done[0]
		for _, th := range p.threads {
			if th.start < d.start {
				return nil
			}
		}
		p.done[0] = nil
		p.done = p.done[1:]
		if err := m.matched(p, d); err != nil {
			return err
		}
		from, err := m.skipTo(p, d)
		if err != nil {
			return err
		}
		skipped := func(th *mthread) bool { return th.start < from }
		p.threads = slices.DeleteFunc(p.threads, skipped)
		p.done = slices.DeleteFunc(p.done, skipped)
	}
	p.done = nil
	return nil
}

// follow moves thread th from pc over the instructions that map no row, and at each
// variable whose condition holds for the row (ok) makes the thread that took it. It
// reports whether some variable took the row.
func (m *match) follow(th *mthread, pc int, ok []bool) bool {
	if m.seen[pc] {
		return false
	}
	m.seen[pc] = true
	switch in := m.prog[pc]; in.Op {
	case planner.OpVar:
		if !ok[in.Var] {
			return false
		}
		n := 1
		if th.path != nil {
			n = th.path.n + 1
		}
		t := &mthread{start: th.start, pc: pc + 1, path: &mstep{v: in.Var, n: n, prev: th.path}}
		m.next = append(m.next, t)
		if m.end[t.pc] {
			m.done = append(m.done, t)
		}
		return true
	case planner.OpJump:
		return m.follow(th, in.X, ok)
	case planner.OpSplit:
		took := m.follow(th, in.X, ok)
		if took && in.Greedy {
			return true
		}
		return m.follow(th, in.Y, ok) || took
	}
	return false
}

func reachesEnd(prog []planner.MatchInstr, pc int) bool {
	seen := make(map[int]bool)
	var walk func(pc int) bool
	walk = func(pc int) bool {
		if seen[pc] {
			return false
		}
		seen[pc] = true
		switch in := prog[pc]; in.Op {
		case planner.OpMatch:
			return true
		case planner.OpJump:
			return walk(in.X)
		case planner.OpSplit:
			return walk(in.X) || walk(in.Y)
		}
		return false
	}
	return walk(pc)
}

// evalConds decides, for every thread of p and every variable it could map x to,
// whether the variable's condition holds, evaluating each variable's condition over
// all its threads at once.
func (m *match) evalConds(p *matchPart, x *overRow) error {
	nv := len(m.n.Vars)
	need := len(p.threads) * nv
	if cap(m.ok) < need {
		m.ok = make([]bool, need)
	}
	m.ok = m.ok[:need]
	clear(m.ok)
	for v, c := range m.conds {
		var who []int
		for i, th := range p.threads {
			if !slices.Contains(m.reach[th.pc], v) {
				continue
			}
			if c == nil {
				m.ok[i*nv+v] = true
				continue
			}
			who = append(who, i)
			c.row(p, th.start, th.path, x, v)
		}
		if c == nil || len(who) == 0 {
			continue
		}
		rec := c.b.record()
		c.b.kinds = c.b.kinds[:0]
		sel, err := c.pred.Select(rec, c.sel[:0])
		rec.Release()
		if err != nil {
			return fmt.Errorf("DEFINE %s: %w", m.n.Vars[v], err)
		}
		c.sel = sel
		for _, r := range sel {
			m.ok[who[r]*nv+v] = true
		}
	}
	return nil
}

// matched builds the output row of the match thread d completed at p's last row.
func (m *match) matched(p *matchPart, d *mthread) error {
	first := p.rows[d.start-p.base]
	for k, c := range m.n.PartitionBy {
		m.part.col[k](first.vals[c])
	}
	m.part.row(exec.Insert)
	m.measures.row(p, d.start, d.path, nil, -1)
	m.matches++
	return nil
}

// skipTo returns the first row number a match may start at after match d.
func (m *match) skipTo(p *matchPart, d *mthread) (int64, error) {
	end := d.start + int64(d.path.n) - 1
	switch m.n.Skip {
	case planner.SkipToNextRow:
		return d.start + 1, nil
	case planner.SkipToFirst, planner.SkipToLast:
		vars := d.path.vars()
		at := -1
		for i, v := range vars {
			if v == m.n.SkipVar && (at < 0 || m.n.Skip == planner.SkipToLast) {
				at = i
			}
		}
		name := m.n.Vars[m.n.SkipVar]
		if at < 0 {
			return 0, fmt.Errorf("MATCH_RECOGNIZE could not skip to %s: no row of the match is mapped to it", name)
		}
		if at == 0 && m.n.Skip == planner.SkipToFirst {
			return 0, fmt.Errorf("MATCH_RECOGNIZE could not skip to the first row of %s: it is the first row of the match, and matching would loop", name)
		}
		return d.start + int64(at), nil
	}
	return end + 1, nil
}

// trim lets go of the rows before p's oldest thread.
func (m *match) trim(p *matchPart) {
	from := p.taken
	for _, th := range p.threads {
		from = min(from, th.start)
	}
	for _, th := range p.done {
		from = min(from, th.start)
	}
	if k := int(from - p.base); k > 0 {
		p.rows = dropFront(p.rows, k)
		p.base = from
	}
}

// emit evaluates the measures of the matches built so far and sends their rows.
func (m *match) emit(ctx context.Context) error {
	if m.matches == 0 {
		return nil
	}
	rows := int64(m.matches)
	m.matches = 0
	parts := m.part.record()
	m.part.kinds = m.part.kinds[:0]
	defer parts.Release()
	navs := m.measures.b.record()
	m.measures.b.kinds = m.measures.b.kinds[:0]
	defer navs.Release()
	cols := append([]arrow.Array(nil), parts.Columns()...)
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for i, ev := range m.meas {
		a, err := ev.Eval(navs)
		if err != nil {
			return fmt.Errorf("measure %s: %w", m.n.Names[i], err)
		}
		made = append(made, a)
		cols = append(cols, a)
	}
	rec := array.NewRecord(m.outT, cols, rows)
	defer rec.Release()
	return m.out.Emit(ctx, exec.Batch{Rec: rec})
}

// LateRows counts the rows dropped for arriving at or before the watermark or the time
// of the last row their partition took.
func (m *match) LateRows() int64 { return m.late }

// Close releases the builders.
func (m *match) Close() error {
	m.part.release()
	m.measures.b.release()
	for _, c := range m.conds {
		if c != nil {
			c.b.release()
		}
	}
	return nil
}

func (m *match) String() string { return fmt.Sprintf("match(%s)", m.n.Describe()) }

// navEval computes navigation values (planner.MatchNav) into rows of a batch that a
// condition or the measures are evaluated over.
type navEval struct {
	navs []planner.MatchNav
	kind []byte // per navigation: how its column's values are held: 'i', 'f', 's' or 'b'
	b    *changes
	pred expr.Predicate
	sel  []int32
	pad  bool       // the batch has a column of NULLs only, for its count of rows
	rows []*overRow // scratch: the rows of the match, first first
	vars []int
}

func newNavEval(mem memory.Allocator, in planner.Schema, navs []planner.MatchNav) (*navEval, error) {
	e := &navEval{navs: navs}
	var s planner.Schema
	for i, nav := range navs {
		s = append(s, planner.Column{Name: fmt.Sprintf("$nav%d", i), Type: nav.T})
		k := byte('i')
		if nav.Col >= 0 {
			switch t := in[nav.Col].Type; {
			case t.Kind == planner.Double || t.Kind == planner.Float:
				k = 'f'
			case t.Kind == planner.String:
				k = 's'
			case t.Kind == planner.Decimal:
				k = 'd'
			}
		}
		if nav.Kind == planner.NavAgg && k == 'd' {
			return nil, fmt.Errorf("%s over DECIMAL is not supported in MATCH_RECOGNIZE", nav.Agg)
		}
		e.kind = append(e.kind, k)
	}
	if len(s) == 0 {
		// A batch without columns has no rows: a column of NULLs counts them.
		s = append(s, planner.Column{Name: "$rows", Type: planner.TypeBoolean})
		e.pad = true
	}
	e.b = newChanges(mem, s)
	return e, nil
}

// row appends the navigation values of a match: the thread that started at row
// number start and mapped path, and then (when cur is not nil) the current row as
// variable v.
func (e *navEval) row(p *matchPart, start int64, path *mstep, cur *overRow, v int) {
	n := 0
	if path != nil {
		n = path.n
	}
	e.vars = slices.Grow(e.vars[:0], n+1)[:n]
	for s := path; s != nil; s = s.prev {
		e.vars[s.n-1] = s.v
	}
	e.rows = e.rows[:0]
	for i := range e.vars {
		e.rows = append(e.rows, p.rows[start-p.base+int64(i)])
	}
	if cur != nil {
		e.vars = append(e.vars, v)
		e.rows = append(e.rows, cur)
	}
	for i, nav := range e.navs {
		e.b.col[i](e.value(nav, e.kind[i]))
	}
	if e.pad {
		e.b.col[0](value{null: true})
	}
	e.b.row(exec.Insert)
}

func (e *navEval) value(nav planner.MatchNav, kind byte) value {
	in := func(i int) bool { return nav.Var < 0 || e.vars[i] == nav.Var }
	n := len(e.rows)
	switch nav.Kind {
	case planner.NavLast:
		k := nav.Offset
		for i := n - 1; i >= 0; i-- {
			if in(i) {
				if k == 0 {
					return e.rows[i].vals[nav.Col]
				}
				k--
			}
		}
	case planner.NavFirst:
		k := nav.Offset
		for i := 0; i < n; i++ {
			if in(i) {
				if k == 0 {
					return e.rows[i].vals[nav.Col]
				}
				k--
			}
		}
	case planner.NavPrev:
		if i := n - 1 - nav.Offset; i >= 0 {
			return e.rows[i].vals[nav.Col]
		}
	case planner.NavAgg:
		return e.aggregate(nav, kind, in)
	}
	return value{null: true}
}

func (e *navEval) aggregate(nav planner.MatchNav, kind byte, in func(int) bool) value {
	var count int64
	var sumI int64
	var sumF float64
	var best value
	have := false
	for i, r := range e.rows {
		if !in(i) {
			continue
		}
		if nav.Col < 0 {
			count++
			continue
		}
		x := r.vals[nav.Col]
		if x.null {
			continue
		}
		count++
		sumI += x.i
		sumF += x.f
		if !have || (nav.Agg == planner.AggMin) == lessValue(x, best, kind) && !equalValue(x, best, kind) {
			best, have = x, true
		}
	}
	switch nav.Agg {
	case planner.AggCount:
		return value{i: count}
	case planner.AggMin, planner.AggMax:
		if !have {
			return value{null: true}
		}
		return best
	}
	if count == 0 {
		return value{null: true}
	}
	if nav.Agg == planner.AggAvg {
		if kind == 'f' {
			return value{f: sumF / float64(count)}
		}
		return value{f: float64(sumI) / float64(count)}
	}
	if kind == 'f' {
		return value{f: sumF}
	}
	return value{i: sumI}
}

func lessValue(a, b value, kind byte) bool {
	switch kind {
	case 'f':
		return a.f < b.f
	case 's':
		return a.s < b.s
	}
	return a.i < b.i
}

func equalValue(a, b value, kind byte) bool {
	switch kind {
	case 'f':
		return a.f == b.f
	case 's':
		return a.s == b.s
	}
	return a.i == b.i
}
