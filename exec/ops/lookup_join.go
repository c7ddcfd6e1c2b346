package ops

import (
	"container/list"
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/planner"
)

// LookupOptions configure a lookup join: its table's Lookuper and cache.
type LookupOptions struct {
	Source exec.Lookuper // closed with the operator
	// Partial keeps the rows of the keys looked up, at most MaxRows keys (0: no bound),
	// each until ExpireAfterWrite since it was read or ExpireAfterAccess since it was
	// last used (0: no limit); CacheMissingKey keeps keys without rows too.
	Partial                             bool
	MaxRows                             int64
	ExpireAfterWrite, ExpireAfterAccess time.Duration
	CacheMissingKey                     bool
	// MaxRetries is how many times a failed lookup is tried again, after a backoff,
	// before the operator fails (and the job restarts by its strategy).
	MaxRetries int
	Now        func() time.Time // nil: time.Now
	// Backoff is the wait before retry n (from 1); nil: 100 ms doubling, at most 5 s.
	Backoff func(n int) time.Duration
}

// lookupJoin joins each batch with the rows its keys find in a table: the distinct
// keys of the batch that its cache lacks are looked up at once. It keeps no state in
// checkpoints (neither does Flink's); its cache starts empty after a restore.
type lookupJoin struct {
	mem         memory.Allocator
	n           *planner.LookupJoin
	out         exec.Output
	opts        LookupOptions
	whole       exec.WholeLookuper // the table read whole, or nil
	keys        []expr.Evaluator
	keySchema   *arrow.Schema
	rightSchema *arrow.Schema
	schema      *arrow.Schema
	width       int // the table's columns
	residual    expr.Predicate
	residualSQL string
	cache       *lookupCache         // nil without a cache
	table       map[string][][]value // a whole table's rows by key
	loaded      time.Time
	stats       LookupStats
}

// LookupStats count a lookup join's work, for tests and metrics.
type LookupStats struct {
	Lookups atomic.Int64 // calls of the Lookuper that succeeded
	Keys    atomic.Int64 // keys asked for
	Hits    atomic.Int64 // keys the cache answered
	Retries atomic.Int64 // failed lookups tried again
}

// LookupCounter is a lookup join that counts its work.
type LookupCounter interface{ LookupStats() *LookupStats }

var (
	_ exec.Operator = (*lookupJoin)(nil)
	_ exec.Closer   = (*lookupJoin)(nil)
	_ LookupCounter = (*lookupJoin)(nil)
)

// NewLookupJoin returns the operator of a plan's LookupJoin.
func NewLookupJoin(mem memory.Allocator, env *expr.Env, n *planner.LookupJoin, out exec.Output, opts LookupOptions) (exec.Operator, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Backoff == nil {
		opts.Backoff = func(n int) time.Duration { return min(100*time.Millisecond<<min(n-1, 10), 5*time.Second) }
	}
	phys := n.Table.PhysicalSchema()
	right := make(planner.Schema, len(phys))
	for i, c := range phys {
		c.Type.NotNull = false
		right[i] = c
	}
	var keyCols planner.Schema
	for _, k := range n.RightKeys {
		keyCols = append(keyCols, right[k])
	}
	j := &lookupJoin{mem: mem, n: n, out: out, opts: opts, width: len(phys),
		keySchema: exec.ArrowSchema(keyCols), rightSchema: exec.ArrowSchema(right), schema: exec.ArrowSchema(n.Schema())}
	j.whole, _ = opts.Source.(exec.WholeLookuper)
	if opts.Partial && j.whole == nil {
		j.cache = &lookupCache{max: opts.MaxRows, write: opts.ExpireAfterWrite, access: opts.ExpireAfterAccess,
			missing: opts.CacheMissingKey, m: map[string]*list.Element{}}
	}
	for _, k := range n.LeftKeys {
		ev, err := expr.Compile(k, mem, env)
		if err != nil {
			return nil, err
		}
		j.keys = append(j.keys, ev)
	}
	if n.Residual != nil {
		pred, err := expr.CompilePredicate(n.Residual, mem, env)
		if err != nil {
			return nil, err
		}
		j.residual = pred
		j.residualSQL = planner.ExprSQL(n.Residual, n.Schema())
	}
	return j, nil
}

func (j *lookupJoin) LookupStats() *LookupStats { return &j.stats }

// Process joins a batch: it finds each row's key, looks up those not at hand, and
// emits the pairs (and, for a LEFT join, each row without a match, padded).
func (j *lookupJoin) Process(ctx context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	keys, err := j.keysOf(b.Rec)
	if err != nil {
		return err
	}
	found, err := j.find(ctx, keys)
	if err != nil {
		return err
	}
	var left []int32
	var right [][]value
	for i, k := range keys.row {
		if k < 0 {
			continue
		}
		for _, r := range found[k] {
			left, right = append(left, int32(i)), append(right, r)
		}
	}
	if j.residual != nil && len(left) > 0 {
		if left, right, err = j.filter(b, left, right); err != nil {
			return err
		}
	}
	if j.n.Outer() {
		left, right = padUnmatched(n, left, right)
	}
	if len(left) == 0 {
		return nil
	}
	rec := j.pairs(b.Rec, left, right)
	defer rec.Release()
	out := exec.Batch{Rec: rec}
	if b.Kinds != nil {
		out.Kinds = make([]exec.RowKind, len(left))
		for k, i := range left {
			out.Kinds[k] = b.Kinds[i]
		}
	}
	return j.out.Emit(ctx, out)
}

// batchKeys are the lookup keys of a batch: each row's distinct key (-1 for a key with
// a NULL, which matches nothing), and each distinct key's encoding and values (valid
// while the batch is).
type batchKeys struct {
	row  []int32
	enc  []string
	vals [][]value
}

// keysOf evaluates the batch's keys.
func (j *lookupJoin) keysOf(rec arrow.Record) (batchKeys, error) {
	cols := make([]arrow.Array, len(j.keys))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	read := make([]func(int) value, len(j.keys))
	for i, ev := range j.keys {
		c, err := ev.Eval(rec)
		if err != nil {
			return batchKeys{}, evalError(j.mem, "LookupJoin", planner.ExprSQL(j.n.LeftKeys[i], j.n.Input.Schema()), exec.Batch{Rec: rec}, err, func(r arrow.Record) error {
				c, err := ev.Eval(r)
				if c != nil {
					c.Release()
				}
				return err
			})
		}
		cols[i] = c
		if read[i], err = reader(c); err != nil {
			return batchKeys{}, err
		}
	}
	n := int(rec.NumRows())
	k := batchKeys{row: make([]int32, n)}
	index := map[string]int32{}
	width := len(j.keys)
	flat := make([]value, n*width)
	var buf []byte
	for r := 0; r < n; r++ {
		key := flat[r*width : (r+1)*width : (r+1)*width]
		null := false
		for i, rd := range read {
			key[i] = rd(r)
			null = null || key[i].null
		}
		if null {
			k.row[r] = -1
			continue
		}
		buf = encodeKey(buf[:0], key)
		at, ok := index[string(buf)]
		if !ok {
			at = int32(len(k.enc))
			enc := string(buf)
			index[enc] = at
			k.enc, k.vals = append(k.enc, enc), append(k.vals, key)
		}
		k.row[r] = at
	}
	return k, nil
}

// find returns the rows of each distinct key: from the whole table, the cache, or one
// lookup of the keys missing.
func (j *lookupJoin) find(ctx context.Context, keys batchKeys) ([][][]value, error) {
	now := j.opts.Now()
	found := make([][][]value, len(keys.enc))
	if j.whole != nil {
		if j.table == nil || now.Sub(j.loaded) >= j.whole.Reload() {
			rows, err := j.lookup(ctx, nil, keys)
			if err != nil {
				return nil, err
			}
			j.table, j.loaded = rows, now
		}
		for i, enc := range keys.enc {
			found[i] = j.table[enc]
		}
		return found, nil
	}
	var missing []int32
	for i, enc := range keys.enc {
		if j.cache != nil {
			if rows, ok := j.cache.get(enc, now.UnixMilli()); ok {
				j.stats.Hits.Add(1)
				found[i] = rows
				continue
			}
		}
		missing = append(missing, int32(i))
	}
	if len(missing) == 0 {
		return found, nil
	}
	rows, err := j.lookup(ctx, missing, keys)
	if err != nil {
		return nil, err
	}
	for _, i := range missing {
		enc := keys.enc[i]
		found[i] = rows[enc]
		if j.cache != nil {
			j.cache.put(enc, rows[enc], now.UnixMilli())
		}
	}
	return found, nil
}

// lookup asks the table for the distinct keys missing (all of it when missing is nil),
// trying again after a backoff when it fails, and returns its rows by key.
func (j *lookupJoin) lookup(ctx context.Context, missing []int32, keys batchKeys) (map[string][][]value, error) {
	var keyRec arrow.Record
	if missing != nil {
		kb := array.NewRecordBuilder(j.mem, j.keySchema)
		defer kb.Release()
		appends := make([]func(value), len(j.keys))
		for i, f := range kb.Fields() {
			appends[i] = appender(f)
		}
		for _, k := range missing {
			for i, v := range keys.vals[k] {
				appends[i](v)
			}
		}
		keyRec = kb.NewRecord()
		defer keyRec.Release()
		j.stats.Keys.Add(int64(len(missing)))
	}
	var rec arrow.Record
	for attempt := 0; ; attempt++ {
		var err error
		if rec, err = j.opts.Source.Lookup(ctx, keyRec); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if attempt >= j.opts.MaxRetries {
			return nil, fmt.Errorf("lookup join: looking up table %s failed, attempts: %d: %w", j.n.Table.Name, attempt+1, err)
		}
		j.stats.Retries.Add(1)
		t := time.NewTimer(j.opts.Backoff(attempt + 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	defer rec.Release()
	j.stats.Lookups.Add(1)
	if int(rec.NumCols()) != j.width {
		return nil, fmt.Errorf("lookup join: table %s returned %d columns, not %d", j.n.Table.Name, rec.NumCols(), j.width)
	}
	rows, err := readRows(rec, j.width)
	if err != nil {
		return nil, fmt.Errorf("lookup join: table %s: %w", j.n.Table.Name, err)
	}
	want := make(map[string]bool, len(missing))
	for _, k := range missing {
		want[keys.enc[k]] = true
	}
	byKey := map[string][][]value{}
	var buf []byte
	for _, row := range rows {
		key, null := keyOf(row, j.n.RightKeys)
		if null {
			continue
		}
		buf = encodeKey(buf[:0], key)
		if missing != nil && !want[string(buf)] {
			continue
		}
		byKey[string(buf)] = append(byKey[string(buf)], ownedRow(row))
	}
	return byKey, nil
}

// filter keeps the pairs for which the residual condition is TRUE.
func (j *lookupJoin) filter(b exec.Batch, left []int32, right [][]value) ([]int32, [][]value, error) {
	rec := j.pairs(b.Rec, left, right)
	defer rec.Release()
	sel, err := j.residual.Select(rec, nil)
	if err != nil {
		return nil, nil, evalError(j.mem, "LookupJoin", j.residualSQL, exec.Batch{Rec: rec}, err, func(r arrow.Record) error {
			_, err := j.residual.Select(r, nil)
			return err
		})
	}
	keptL, keptR := make([]int32, 0, len(sel)), make([][]value, 0, len(sel))
	for _, s := range sel {
		keptL, keptR = append(keptL, left[s]), append(keptR, right[s])
	}
	return keptL, keptR, nil
}

// padUnmatched adds a padded pair (nil right row) for each of the n input rows that
// left lacks, in row order.
func padUnmatched(n int, left []int32, right [][]value) ([]int32, [][]value) {
	outL, outR := make([]int32, 0, len(left)+n), make([][]value, 0, len(left)+n)
	k := 0
	for i := int32(0); i < int32(n); i++ {
		if k < len(left) && left[k] == i {
			for k < len(left) && left[k] == i {
				outL, outR = append(outL, i), append(outR, right[k])
				k++
			}
			continue
		}
		outL, outR = append(outL, i), append(outR, nil)
	}
	return outL, outR
}

// pairs builds the output rows: input row left[k] beside table row right[k] (NULLs
// for nil).
func (j *lookupJoin) pairs(in arrow.Record, left []int32, right [][]value) arrow.Record {
	taken := exec.TakeRecord(j.mem, in, left)
	defer taken.Release()
	rb := array.NewRecordBuilder(j.mem, j.rightSchema)
	defer rb.Release()
	appends := make([]func(value), j.width)
	for i, f := range rb.Fields() {
		appends[i] = appender(f)
	}
	for _, r := range right {
		for c, add := range appends {
			if r == nil {
				add(value{null: true})
			} else {
				add(r[c])
			}
		}
	}
	rrec := rb.NewRecord()
	defer rrec.Release()
	cols := append(append([]arrow.Array(nil), taken.Columns()...), rrec.Columns()...)
	return array.NewRecord(j.schema, cols, int64(len(left)))
}

func (j *lookupJoin) Close() error {
	return j.opts.Source.Close()
}

func (j *lookupJoin) String() string { return fmt.Sprintf("lookupJoin(%s)", j.n.Table.Name) }

// lookupCache keeps the rows of recently looked-up keys, least recently used first
// out, Flink's PARTIAL cache.
type lookupCache struct {
	max           int64
	write, access time.Duration
	missing       bool
	m             map[string]*list.Element
	lru           list.List // of *cached, most recently used at the front
}

type cached struct {
	key               string
	rows              [][]value
	written, accessed int64 // ms
}

// get returns the rows of key, if the cache holds them and they have not expired.
func (c *lookupCache) get(key string, now int64) ([][]value, bool) {
	e, ok := c.m[key]
	if !ok {
		return nil, false
	}
	v := e.Value.(*cached)
	if c.write > 0 && now-v.written >= c.write.Milliseconds() || c.access > 0 && now-v.accessed >= c.access.Milliseconds() {
		c.lru.Remove(e)
		delete(c.m, key)
		return nil, false
	}
	v.accessed = now
	c.lru.MoveToFront(e)
	return v.rows, true
}

// put keeps key's rows, dropping the least recently used key past the bound.
func (c *lookupCache) put(key string, rows [][]value, now int64) {
	if len(rows) == 0 && !c.missing {
		return
	}
	if e, ok := c.m[key]; ok {
		c.lru.Remove(e)
	}
	c.m[key] = c.lru.PushFront(&cached{key: key, rows: rows, written: now, accessed: now})
	for c.max > 0 && int64(len(c.m)) > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*cached).key)
	}
}
