package kafka

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Delivery guarantees, 'sink.delivery-guarantee'.
const (
	guaranteeNone        = "none"
	guaranteeAtLeastOnce = "at-least-once"
	guaranteeExactlyOnce = "exactly-once"
)

// KafkaSink writes each row it receives as one record of 'topic': the row in the
// table's format (without the line break) as the value and, with 'key.format' and
// 'key.fields', those fields as the key. It is append-only: an update or delete fails
// the job.
//
//   - 'none' and 'at-least-once' produce asynchronously; at-least-once waits for every
//     acknowledgement at each barrier, and both at Finish. A failed produce fails the
//     job.
//   - 'exactly-once' (with checkpoints; without, it is at-least-once) writes through a
//     spool and Kafka transactions, see txn.go.
type KafkaSink struct {
	table      string
	topic      string
	topicID    [16]byte
	enc        format.Encoder
	changelog  bool           // enc writes changes (debezium-json, ...): updates and deletes are records too
	upsert     bool           // upsert-kafka: rows are upserts and tombstones by key (see UpsertSink)
	keyEnc     format.Encoder // nil: records have no key
	keyCols    []int
	valCols    []int // nil: every column ('value.fields-include' = 'ALL')
	tsCol      int   // the column of the 'timestamp' metadata, -1 for none
	headersCol int   // the column of the 'headers' metadata, -1 for none
	guarantee  string
	cl         *kgo.Client
	txn        *spool // exactly-once
	buf, kbuf  []byte
	promise    func(*kgo.Record, error)
	mu         sync.Mutex
	produceErr error // the first failed produce
	failed     bool
	closed     bool
}

var (
	_ connector.Sink      = (*KafkaSink)(nil)
	_ exec.Snapshotter    = (*KafkaSink)(nil)
	_ exec.Restorer       = (*KafkaSink)(nil)
	_ exec.CommitListener = (*KafkaSink)(nil)
)

var sinkKeys = []string{"topic", "properties.bootstrap.servers", "key.format", "key.fields",
	"value.fields-include", "sink.partitioner", "sink.delivery-guarantee", "sink.transactional-id-prefix",
	"sink.parallelism"}

// delivery is Commits for exactly-once, else Appends.
func delivery(t *planner.Table) connector.Delivery {
	if v, _ := t.Option("sink.delivery-guarantee"); strings.EqualFold(strings.TrimSpace(v), guaranteeExactlyOnce) {
		return connector.Commits
	}
	return connector.Appends
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func openSink(ctx context.Context, spec connector.SinkSpec) (connector.Sink, error) {
	t := spec.Table
	if len(spec.Schema) == 0 {
		spec.Schema = t.PersistedSchema()
	}
	keyFormat := strings.ToLower(strings.TrimSpace(t.Options["key.format"]))
	isExtra := func(k string) bool {
		return isProperty(k) || (keyFormat != "" && strings.HasPrefix(k, "key."+keyFormat+"."))
	}
	o, err := connector.NewOptions(t, sinkKeys, true, isExtra)
	if err != nil {
		return nil, err
	}
	ts, err := topics(o)
	if err != nil {
		return nil, err
	}
	if len(ts) != 1 {
		return nil, o.Err("option 'topic' of a sink must name one topic")
	}
	opts, err := clientOpts(o, t)
	if err != nil {
		return nil, err
	}
	if _, err := o.Int64("sink.parallelism", 1, 1, 1<<15); err != nil {
		return nil, err
	}
	guarantee, err := choice(o, t, "sink.delivery-guarantee", guaranteeAtLeastOnce,
		guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce)
	if err != nil {
		return nil, err
	}
	partitioner, err := choice(o, t, "sink.partitioner", "default", "default", "fixed", "round-robin")
	if err != nil {
		return nil, err
	}
	include, err := choice(o, t, "value.fields-include", "all", "all", "except_key")
	if err != nil {
		return nil, err
	}
	names, meta := columnNames(spec)
	s := &KafkaSink{table: t.Name, topic: ts[0], guarantee: guarantee, changelog: format.IsChangelog(o.Format()), tsCol: -1, headersCol: -1}
	s.promise = s.onProduced
	var physical []int // the columns a format writes: all but the metadata ones
	for i := range names {
		switch meta[i] {
		case "timestamp":
			s.tsCol = i
		case "headers":
			s.headersCol = i
		case "":
			physical = append(physical, i)
		}
	}
	if len(physical) < len(names) {
		s.valCols = physical
	}
	valNames := make([]string, 0, len(names))
	for _, i := range physical {
		valNames = append(valNames, names[i])
	}
	if s.enc, err = format.NewEncoder(o.Format(), columnsAt(spec, valNames, physical), t.Options, spec.Location); err != nil {
		return nil, o.Err("%v", err)
	}
	fields, hasFields := t.Option("key.fields")
	switch {
	case keyFormat == "" && hasFields:
		return nil, o.Err("option 'key.fields' needs 'key.format'")
	case keyFormat != "" && !hasFields:
		return nil, o.Err("option 'key.format' needs 'key.fields'")
	case keyFormat != "":
		for _, f := range strings.Split(fields, ";") {
			i := indexOf(names, strings.TrimSpace(f))
			if i >= 0 && meta[i] != "" {
				i = -1 // a metadata column is no key field
			}
			if i < 0 {
				return nil, o.Err("option 'key.fields': no column %q (columns: %s)", strings.TrimSpace(f), strings.Join(names, ", "))
			}
			s.keyCols = append(s.keyCols, i)
		}
		keyNames := make([]string, len(s.keyCols))
		for i, c := range s.keyCols {
			keyNames[i] = names[c]
		}
		if s.keyEnc, err = format.NewEncoder(keyFormat, columnsAt(spec, keyNames, s.keyCols), keyOptions(t, keyFormat), spec.Location); err != nil {
			return nil, o.Err("option 'key.format': %v", err)
		}
		if include == "except_key" {
			var valNames []string
			s.valCols = nil
			for _, i := range physical {
				if indexOfInt(s.keyCols, i) < 0 {
					s.valCols = append(s.valCols, i)
					valNames = append(valNames, names[i])
				}
			}
			if s.enc, err = format.NewEncoder(o.Format(), columnsAt(spec, valNames, s.valCols), t.Options, spec.Location); err != nil {
				return nil, o.Err("%v", err)
			}
		}
	case include == "except_key":
		return nil, o.Err("option 'value.fields-include' = 'EXCEPT_KEY' needs 'key.fields'")
	}
	switch partitioner {
	case "fixed":
		task := spec.Task
		opts = append(opts, kgo.RecordPartitioner(kgo.BasicConsistentPartitioner(func(string) func(*kgo.Record, int) int {
			return func(_ *kgo.Record, n int) int { return task % n }
		})))
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	default: // Kafka's default: by the key's murmur2 hash, sticky without a key
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	}
	if guarantee == guaranteeExactlyOnce && !spec.Checkpointed {
		s.guarantee = guaranteeAtLeastOnce // nothing to commit on: Finish flushes
	}
	if s.guarantee == guaranteeExactlyOnce {
		prefix, err := o.Required("sink.transactional-id-prefix")
		if err != nil {
			return nil, o.Err("option 'sink.transactional-id-prefix' is required with 'sink.delivery-guarantee' = 'exactly-once'")
		}
		if !prefixPattern.MatchString(prefix) {
			return nil, o.Err("option 'sink.transactional-id-prefix' may hold letters, digits, '.', '_' and '-', got %q", prefix)
		}
		if spec.StateDir == "" {
			return nil, o.Err("an exactly-once kafka sink needs a state directory")
		}
		timeout, err := millisProperty(o, "properties.transaction.timeout.ms", time.Minute)
		if err != nil {
			return nil, err
		}
		txnID := prefix + "-" + strconv.Itoa(spec.Task)
		opts = append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(timeout))
		if err := s.connect(ctx, o, opts); err != nil {
			return nil, err
		}
		if s.txn, err = openSpool(ctx, s, spec, txnID, timeout); err != nil {
			s.cl.Close()
			return nil, err
		}
		return s, nil
	}
	if err := s.connect(ctx, o, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// connect creates the client and checks that the topic exists.
func (s *KafkaSink) connect(ctx context.Context, o *connector.Options, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return o.Err("%v", err)
	}
	_, ids, err := metadata(ctx, cl, []string{s.topic})
	if err != nil {
		cl.Close()
		return tableErr(s.table, err)
	}
	s.cl, s.topicID = cl, ids[s.topic]
	return nil
}

// columnNames are the names rows are written with: the table's columns, as Flink
// writes them, when the query's row has as many; and by column, the metadata key it
// writes ("" for a physical column).
// columnsAt is the columns idx of spec's schema, named by names (one for each of idx),
// as a format writes them.
func columnsAt(spec connector.SinkSpec, names []string, idx []int) planner.Schema {
	cols := make(planner.Schema, len(idx))
	for i, c := range idx {
		cols[i] = planner.Column{Name: names[i], Type: spec.Schema[c].Type}
	}
	return cols
}

func columnNames(spec connector.SinkSpec) ([]string, []string) {
	names := make([]string, len(spec.Schema))
	meta := make([]string, len(spec.Schema))
	for i, c := range spec.Schema {
		names[i] = c.Name
	}
	if persisted := spec.Table.PersistedSchema(); len(persisted) == len(names) {
		for i, c := range persisted {
			names[i] = c.Name
			col := spec.Table.Columns[spec.Table.Schema().Index(c.Name)]
			if k, ok := spec.Table.MetadataOf(col); ok {
				meta[i] = k.Key
			}
		}
	}
	return names, meta
}

// keyOptions are the key format's options: 'key.<format>.x' as '<format>.x'.
func keyOptions(t *planner.Table, keyFormat string) map[string]string {
	m := map[string]string{}
	for k, v := range t.Options {
		if rest, ok := strings.CutPrefix(k, "key."); ok && strings.HasPrefix(rest, keyFormat+".") {
			m[rest] = v
		}
	}
	return m
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

func indexOfInt(list []int, n int) int {
	for i, x := range list {
		if x == n {
			return i
		}
	}
	return -1
}

// notAppendOnly is connector.ErrNotAppendOnly about this sink's table.
type notAppendOnly struct{ table string }

func (e *notAppendOnly) Error() string {
	return "table " + e.table + ": the kafka sink accepts only inserts; the query produces updates or deletes"
}
func (e *notAppendOnly) Unwrap() error { return connector.ErrNotAppendOnly }

// onProduced records the first failed produce; it runs on the client's goroutines.
func (s *KafkaSink) onProduced(_ *kgo.Record, err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	if s.produceErr == nil {
		s.produceErr = err
	}
	s.mu.Unlock()
}

// err returns the first failed produce, naming the table.
func (s *KafkaSink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.produceErr != nil {
		s.failed = true
		return fmt.Errorf("table %s: producing to topic %s: %w", s.table, s.topic, s.produceErr)
	}
	return nil
}

// Process writes the rows of b; see exec.Operator.
func (s *KafkaSink) Process(ctx context.Context, _ int, b exec.Batch) error {
	if s.closed || s.failed {
		return fmt.Errorf("table %s: the kafka sink is closed or has failed", s.table)
	}
	n := b.Len()
	if n == 0 {
		return nil
	}
	for _, k := range b.Kinds {
		if k != exec.Insert && !s.changelog && !s.upsert {
			s.failed = true
			return &notAppendOnly{s.table}
		}
	}
	if err := s.err(); err != nil {
		return err
	}
	vb, kb := project(b, s.valCols), project(b, s.keyCols)
	defer func() {
		if s.valCols != nil {
			vb.Release()
		}
		if s.keyEnc != nil {
			kb.Release()
		}
	}()
	if s.upsert {
		s.processUpsert(ctx, vb, kb, b)
		return nil
	}
	if s.txn != nil {
		if err := s.txn.begin(ctx); err != nil {
			return err
		}
		stamps, headers := s.metadataColumns(b)
		var meta *recordMeta
		if s.txn.meta {
			meta = &recordMeta{}
		}
		for i := 0; i < n; i++ {
			var key []byte
			if s.keyEnc != nil {
				s.kbuf = line(s.keyEnc.AppendRow(s.kbuf[:0], kb, i))
				key = s.kbuf
			}
			s.buf = line(s.enc.AppendRow(s.buf[:0], vb, i))
			if meta != nil {
				*meta = recordMeta{}
				if stamps != nil && stamps.IsValid(i) {
					meta.timestamp, meta.hasTimestamp = int64(stamps.Value(i)), true
				}
				if headers != nil && headers.IsValid(i) {
					meta.headers = recordHeaders(headers, i)
				}
			}
			if err := s.txn.write(key, s.buf, meta); err != nil {
				return err
			}
		}
		return nil
	}
	// The client keeps the records until they are acknowledged: each batch gets its own
	// records and bytes.
	recs := make([]kgo.Record, n)
	var arena []byte
	ends := make([]int, 2*n)
	for i := 0; i < n; i++ {
		if s.keyEnc != nil {
			arena = line(s.keyEnc.AppendRow(arena, kb, i))
		}
		ends[2*i] = len(arena)
		arena = line(s.enc.AppendRow(arena, vb, i))
		ends[2*i+1] = len(arena)
	}
	start := 0
	stamps, headers := s.metadataColumns(b)
	for i := range recs {
		r := &recs[i]
		r.Topic = s.topic
		if stamps != nil && stamps.IsValid(i) {
			r.Timestamp = time.UnixMilli(int64(stamps.Value(i)))
		}
		if headers != nil && headers.IsValid(i) {
			r.Headers = recordHeaders(headers, i)
		}
		if s.keyEnc != nil {
			r.Key = arena[start:ends[2*i]:ends[2*i]]
		}
		r.Value = arena[ends[2*i]:ends[2*i+1]:ends[2*i+1]]
		start = ends[2*i+1]
		s.cl.Produce(ctx, r, s.promise)
	}
	return nil
}

// metadataColumns returns the columns of b the sink writes as the records' timestamp
// and headers, nil for none.
func (s *KafkaSink) metadataColumns(b exec.Batch) (stamps *array.Timestamp, headers *array.Map) {
	if s.tsCol >= 0 {
		stamps, _ = b.Rec.Column(s.tsCol).(*array.Timestamp)
	}
	if s.headersCol >= 0 {
		headers, _ = b.Rec.Column(s.headersCol).(*array.Map)
	}
	return stamps, headers
}

// recordHeaders returns row i of a MAP<STRING, BYTES> column as record headers; a NULL
// key is left out.
func recordHeaders(m *array.Map, i int) []kgo.RecordHeader {
	keys, _ := m.Keys().(*array.String)
	items, _ := m.Items().(*array.Binary)
	if keys == nil || items == nil {
		return nil
	}
	start, end := m.ValueOffsets(i)
	hs := make([]kgo.RecordHeader, 0, end-start)
	for j := int(start); j < int(end); j++ {
		if keys.IsNull(j) {
			continue
		}
		h := kgo.RecordHeader{Key: keys.Value(j)}
		if items.IsValid(j) {
			h.Value = append([]byte{}, items.Value(j)...) // empty, not null
		}
		hs = append(hs, h)
	}
	return hs
}

// line drops the line break an encoder ends a row with.
func line(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}

// project returns the batch of b's columns cols (b itself for nil cols, and an empty
// batch for empty cols); the caller releases a projection.
func project(b exec.Batch, cols []int) exec.Batch {
	if cols == nil {
		return b
	}
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = b.Rec.Schema().Field(c)
		arrs[i] = b.Rec.Column(c)
	}
	return exec.Batch{Rec: array.NewRecord(arrow.NewSchema(fields, nil), arrs, b.Rec.NumRows())}
}

// flush waits for every record produced to be acknowledged.
func (s *KafkaSink) flush(ctx context.Context) error {
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("table %s: flushing records to topic %s: %w", s.table, s.topic, err)
	}
	return s.err()
}

// Snapshot: at-least-once waits for every record produced so far to be acknowledged;
// exactly-once seals the rows since the last barrier (see spool.seal). See
// exec.Snapshotter.
func (s *KafkaSink) Snapshot(ctx context.Context, id int64) ([]byte, error) {
	switch {
	case s.closed || s.failed:
		return nil, fmt.Errorf("table %s: the kafka sink is closed or has failed", s.table)
	case s.txn != nil:
		return s.txn.seal(ctx, id)
	case s.guarantee == guaranteeAtLeastOnce:
		return nil, s.flush(ctx)
	}
	return nil, s.err()
}

// Restore takes up the pending checkpoints of an exactly-once sink's snapshot (see
// spool.restore). See exec.Restorer.
func (s *KafkaSink) Restore(state []byte) error {
	if s.txn == nil {
		return fmt.Errorf("table %s: the kafka sink keeps state only with 'sink.delivery-guarantee' = 'exactly-once'", s.table)
	}
	return s.txn.restore(state)
}

// CheckpointComplete commits the rows of exactly-once checkpoints up to id. See
// exec.CommitListener.
func (s *KafkaSink) CheckpointComplete(ctx context.Context, id int64) error {
	if s.txn == nil || s.closed {
		return nil
	}
	return s.txn.commit(ctx, id)
}

// Finish waits for every record to be acknowledged; an exactly-once sink writes out its
// spool, which the job's final checkpoint seals and commits.
func (s *KafkaSink) Finish(ctx context.Context) error {
	if s.closed || s.failed {
		return fmt.Errorf("table %s: the kafka sink is closed or has failed", s.table)
	}
	if s.txn != nil {
		if err := s.txn.begin(ctx); err != nil {
			return err
		}
		return s.txn.flush()
	}
	return s.flush(ctx)
}

// Close releases the client (records not acknowledged fail) and the spool's file.
func (s *KafkaSink) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.txn != nil {
		err = s.txn.close()
	}
	s.cl.Close()
	return err
}
