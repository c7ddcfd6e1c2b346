package kafka

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
	"github.com/twmb/franz-go/pkg/kgo"
)

// UpsertSource and UpsertSink are the connector 'upsert-kafka': a topic read and
// written as a table keyed by its PRIMARY KEY, the record key holding the key's
// columns ('key.format') and the value the row ('value.format'), a record with a null
// value (a tombstone) deleting its key. It is Flink's upsert-kafka connector.
//
// The source reads every partition from its earliest offset and normalizes the upserts
// into a changelog as Flink's ChangelogNormalize does: it keeps the last value of each
// key (by the key's bytes, per partition, in its checkpointed state), so a record of a
// new key is +I, one of a known key -U of the old row and +U of the new (nothing when
// the value did not change), and a tombstone -D of the old row (nothing for an unknown
// key). Kafka puts the records of a key in one partition when they are produced by key
// (as this sink and Flink's do), so each key lives in one source task. With METADATA
// columns, a change carries the metadata of the record holding the value it adds or
// retracts, so the source keeps that beside each key's last value.
//
// The sink writes +I and +U as a record of the key and the row, -D as a tombstone of
// the key, and drops -U; records are partitioned by the key's hash, with the
// timestamp and headers of their METADATA columns. Written again after
// a failure, a key's records rewrite the same final value: an exactly-once final state
// for readers that apply them by key (this source, a compacted topic).
var (
	UpsertSource = connector.SourceConnector{Open: openUpsertSource, Replayable: true, Parallel: true, Rescale: rescaleSource}
	UpsertSink   = connector.SinkConnector{Open: openUpsertSink, Delivery: func(*planner.Table) connector.Delivery { return connector.Upserts }}
)

var upsertKeys = []string{"topic", "properties.bootstrap.servers", "properties.group.id",
	"key.format", "key.fields-prefix", "value.format", "value.fields-include",
	"scan.bounded.mode", "sink.parallelism", "sink.buffer-flush.max-rows", "sink.buffer-flush.interval",
	"sink.delivery-guarantee"}

// upsertTable is an upsert-kafka table's options, checked.
type upsertTable struct {
	o                    *connector.Options
	keyFormat, valFormat string
	keyCols, valCols     []int    // physical columns of the key and of the value, in their order
	keyNames             []string // the key's fields as the key format writes them (without the prefix)
	keyOpts, valOpts     map[string]string
}

// parseUpsertTable checks an upsert-kafka table's options and key.
func parseUpsertTable(t *planner.Table, schema planner.Schema) (*upsertTable, error) {
	keyFormat := strings.ToLower(strings.TrimSpace(t.Options["key.format"]))
	valFormat := strings.ToLower(strings.TrimSpace(t.Options["value.format"]))
	extra := func(k string) bool {
		if isProperty(k) {
			return true
		}
		for _, side := range []struct{ prefix, f string }{{"key.", keyFormat}, {"value.", valFormat}} {
			if rest, ok := strings.CutPrefix(k, side.prefix); ok && side.f != "" && strings.HasPrefix(rest, side.f+".") {
				keys, _ := format.OptionKeys(side.f)
				for _, fk := range keys {
					if rest == fk {
						return true
					}
				}
			}
		}
		return false
	}
	o, err := connector.NewOptions(t, upsertKeys, false, extra)
	if err != nil {
		return nil, err
	}
	u := &upsertTable{o: o, keyFormat: keyFormat, valFormat: valFormat}
	for _, f := range []struct{ key, v string }{{"key.format", keyFormat}, {"value.format", valFormat}} {
		if f.v == "" {
			return nil, o.Err("option '%s' is required (supported: %s)", f.key, strings.Join(format.Formats(), ", "))
		}
		if _, ok := format.OptionKeys(f.v); !ok {
			return nil, o.Err("option '%s': unknown format %q (supported: %s)", f.key, f.v, strings.Join(format.Formats(), ", "))
		}
		if format.IsChangelog(f.v) {
			return nil, o.Err("option '%s': the upsert-kafka connector needs a format of inserts, not the changelog format %s", f.key, f.v)
		}
	}
	if len(t.PrimaryKey) == 0 {
		return nil, o.Err("the upsert-kafka connector needs a PRIMARY KEY (the record key's columns)")
	}
	include, err := choice(o, t, "value.fields-include", "all", "all", "except_key")
	if err != nil {
		return nil, err
	}
	prefix := t.Options["key.fields-prefix"]
	if prefix != "" && include != "except_key" {
		return nil, o.Err("option 'key.fields-prefix' needs 'value.fields-include' = 'EXCEPT_KEY'")
	}
	for _, k := range t.PrimaryKey {
		i := schema.Index(k)
		if i < 0 {
			return nil, o.Err("the primary key column %s is not a physical column", k)
		}
		name, ok := strings.CutPrefix(schema[i].Name, prefix)
		if !ok {
			return nil, o.Err("the key column %s does not start with 'key.fields-prefix' %q", schema[i].Name, prefix)
		}
		u.keyCols = append(u.keyCols, i)
		u.keyNames = append(u.keyNames, name)
	}
	for i := range schema {
		if include == "all" || indexOfInt(u.keyCols, i) < 0 {
			u.valCols = append(u.valCols, i)
		}
	}
	if len(u.valCols) == 0 {
		return nil, o.Err("with 'value.fields-include' = 'EXCEPT_KEY' the value has no columns")
	}
	u.keyOpts = keyOptions(t, keyFormat)
	u.valOpts = map[string]string{}
	for k, v := range t.Options {
		if rest, ok := strings.CutPrefix(k, "value."); ok && strings.HasPrefix(rest, valFormat+".") {
			u.valOpts[rest] = v
		}
	}
	return u, nil
}

func openUpsertSource(ctx context.Context, spec connector.SourceSpec) (exec.Reader, error) {
	t := spec.Table
	tasks := max(spec.Tasks, 1)
	if spec.Tasks < 0 || spec.Task < 0 || spec.Task >= tasks {
		return nil, connector.TableError(t, connector.ErrInvalidOption, "source task %d of %d does not exist", spec.Task, spec.Tasks)
	}
	schema := t.PhysicalSchema()
	u, err := parseUpsertTable(t, schema)
	if err != nil {
		return nil, err
	}
	o := u.o
	names, err := topics(o)
	if err != nil {
		return nil, err
	}
	opts, err := clientOpts(o, t)
	if err != nil {
		return nil, err
	}
	bounded, err := choice(o, t, "scan.bounded.mode", "unbounded", "unbounded", "latest-offset")
	if err != nil {
		return nil, err
	}
	group, _ := t.Option("properties.group.id")
	up, err := newUpserts(spec, u, schema)
	if err != nil {
		return nil, err
	}
	return newReader(ctx, spec, readerConfig{names: names, opts: opts, group: strings.TrimSpace(group),
		startup: "earliest-offset", bounded: bounded, readCommitted: true, reset: "earliest",
		raw: u.valFormat == format.Raw}, up.valDec, up)
}

// upserts is the part of a Reader of an upsert-kafka table that decodes records into
// rows: the value decoder and, when the value lacks the key's columns, the key decoder,
// kept in step (each row is one of each), and the rows' kinds.
type upserts struct {
	schema   *arrow.Schema // the table's physical columns
	keyCols  []int
	valCols  []int
	keyDec   format.Decoder // nil: the value holds every column ('value.fields-include' = 'ALL')
	keyCheck format.Decoder // decodes the key of a new key before its value, so that a bad key adds nothing
	valDec   format.Decoder
	kinds    []exec.RowKind
}

func newUpserts(spec connector.SourceSpec, u *upsertTable, schema planner.Schema) (*upserts, error) {
	up := &upserts{schema: exec.ArrowSchema(schema), keyCols: u.keyCols, valCols: u.valCols}
	sub := func(cols []int, names []string) planner.Schema {
		s := make(planner.Schema, len(cols))
		for i, c := range cols {
			s[i] = schema[c]
			if names != nil {
				s[i].Name = names[i]
			}
		}
		return s
	}
	var err error
	if up.valDec, err = format.NewDecoder(u.valFormat, sub(u.valCols, nil), spec.Mem, u.valOpts, spec.Location); err != nil {
		return nil, u.o.Err("option 'value.format': %v", err)
	}
	if len(u.valCols) < len(schema) {
		ks := sub(u.keyCols, u.keyNames)
		if up.keyDec, err = format.NewDecoder(u.keyFormat, ks, spec.Mem, u.keyOpts, spec.Location); err == nil {
			up.keyCheck, err = format.NewDecoder(u.keyFormat, ks, spec.Mem, u.keyOpts, spec.Location)
		}
		if err != nil {
			up.release()
			return nil, u.o.Err("option 'key.format': %v", err)
		}
	}
	return up, nil
}

// release frees the decoders; nil-safe.
func (u *upserts) release() {
	if u == nil {
		return
	}
	for _, d := range []format.Decoder{u.valDec, u.keyDec, u.keyCheck} {
		if d == nil {
			continue
		}
		if rec := d.Flush(); rec != nil {
			rec.Release()
		}
		d.Release()
	}
}

func (u *upserts) skipped() int64 {
	n := u.valDec.Skipped()
	if u.keyCheck != nil {
		n += u.keyCheck.Skipped()
	}
	return n
}

// add decodes a row from a record's key and value and adds it with kind. It returns
// false when the value (or a new key) was skipped as malformed; an error fails the job.
func (u *upserts) add(key, value []byte, lineNo int64, kind exec.RowKind, newKey bool) (bool, error) {
	if u.keyDec != nil && newKey {
		n := u.keyCheck.Rows()
		if err := u.keyCheck.Decode(key, lineNo); err != nil {
			return false, fmt.Errorf("the record's key: %w", err)
		}
		if u.keyCheck.Rows() == n {
			return false, nil
		}
		if n >= 1024 {
			u.keyCheck.Flush().Release()
		}
	}
	n := u.valDec.Rows()
	if err := u.valDec.Decode(value, lineNo); err != nil {
		return false, err
	}
	if u.valDec.Rows() == n {
		return false, nil
	}
	if u.keyDec != nil {
		if err := u.keyDec.Decode(key, lineNo); err != nil {
			return false, fmt.Errorf("the record's key: %w", err)
		}
	}
	u.kinds = append(u.kinds, kind)
	return true, nil
}

// flush returns the rows added since the last flush as one record of the table's
// columns, and their kinds.
func (u *upserts) flush() (arrow.Record, []exec.RowKind) {
	vrec := u.valDec.Flush()
	kinds := u.kinds
	u.kinds = make([]exec.RowKind, 0, cap(kinds))
	if u.keyDec == nil || vrec == nil {
		return vrec, kinds
	}
	krec := u.keyDec.Flush()
	defer krec.Release()
	defer vrec.Release()
	cols := make([]arrow.Array, len(u.schema.Fields()))
	for i, c := range u.keyCols {
		cols[c] = krec.Column(i)
	}
	for i, c := range u.valCols {
		cols[c] = vrec.Column(i)
	}
	return array.NewRecord(u.schema, cols, vrec.NumRows()), kinds
}

// upsert turns a record of an upsert-kafka topic into changes of its key (see
// UpsertSource).
func (r *Reader) upsert(p *partition, rec *kgo.Record) error {
	if rec.Key == nil {
		return &format.ParseError{Line: rec.Offset + 1, Text: string(rec.Value),
			Msg: "the record has no key (an upsert-kafka table's records are keyed by its primary key)"}
	}
	before := r.dec.Rows()
	defer func() {
		if before == 0 && r.dec.Rows() > 0 {
			r.origin = make([]recordAt, 0, r.batch)
		}
		for range r.dec.Rows() - before {
			r.origin = append(r.origin, recordAt{p.topicPartition, p.index, rec.Offset})
		}
	}()
	key := string(rec.Key)
	prev, had := p.last[key]
	line := rec.Offset + 1
	// With metadata columns, a row of the new value has this record's metadata, a
	// retraction of the old one the metadata of the record that held it.
	var cur, old *recordInfo
	if r.meta != nil {
		info := infoOf(rec)
		cur, old = &info, p.lastInfo[key]
		if old == nil { // restored from a state without it
			old = cur
		}
	}
	if rec.Value == nil { // a tombstone
		if !had {
			return nil
		}
		delete(p.last, key)
		delete(p.lastInfo, key)
		_, err := r.addUpsert(rec.Key, prev, line, exec.Delete, false, old)
		return err
	}
	value := rec.Value
	if !r.raw {
		value = bytes.TrimSuffix(bytes.TrimSuffix(value, newline), carriageReturn)
	}
	if had && bytes.Equal(prev, value) {
		return nil // no change
	}
	kind := exec.Insert
	if had {
		kind = exec.UpdateAfter
		if _, err := r.addUpsert(rec.Key, prev, line, exec.UpdateBefore, false, old); err != nil {
			return err
		}
	}
	ok, err := r.addUpsert(rec.Key, value, line, kind, !had, cur)
	if err != nil {
		return err
	}
	if !ok { // skipped as malformed: the key keeps its value
		if had {
			_, err = r.addUpsert(rec.Key, prev, line, exec.UpdateAfter, false, old)
		}
		return err
	}
	p.last[key] = bytes.Clone(value)
	if cur != nil {
		p.lastInfo[key] = cur
	}
	return nil
}

// addUpsert adds a row of a key's change (see upserts.add) with the metadata of info
// (nil without metadata columns).
func (r *Reader) addUpsert(key, value []byte, lineNo int64, kind exec.RowKind, newKey bool, info *recordInfo) (bool, error) {
	before := r.dec.Rows()
	ok, err := r.up.add(key, value, lineNo, kind, newKey)
	if n := r.dec.Rows() - before; r.meta != nil && n > 0 {
		r.meta.add(info, n)
	}
	return ok, err
}

func openUpsertSink(ctx context.Context, spec connector.SinkSpec) (connector.Sink, error) {
	t := spec.Table
	if len(spec.Schema) == 0 {
		spec.Schema = t.PersistedSchema()
	}
	names, meta := columnNames(spec)
	// The key and value are of the physical columns; the metadata columns are the
	// records' timestamp and headers.
	var schema planner.Schema
	var physical []int // the row's column of each of schema's
	tsCol, headersCol := -1, -1
	for i, c := range spec.Schema {
		switch meta[i] {
		case "timestamp":
			tsCol = i
		case "headers":
			headersCol = i
		case "":
			schema = append(schema, planner.Column{Name: names[i], Type: c.Type})
			physical = append(physical, i)
		}
	}
	u, err := parseUpsertTable(t, schema)
	if err != nil {
		return nil, err
	}
	for i, c := range u.keyCols {
		u.keyCols[i] = physical[c]
	}
	for i, c := range u.valCols {
		u.valCols[i] = physical[c]
	}
	o := u.o
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
	for _, k := range []string{"sink.parallelism", "sink.buffer-flush.max-rows"} {
		if _, err := o.Int64(k, 1, 0, 1<<31); err != nil {
			return nil, err
		}
	}
	if _, err := o.Duration("sink.buffer-flush.interval", 0); err != nil {
		return nil, err
	}
	guarantee, err := choice(o, t, "sink.delivery-guarantee", guaranteeAtLeastOnce, guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce)
	if err != nil {
		return nil, err
	}
	if guarantee == guaranteeExactlyOnce {
		return nil, o.Err("the upsert-kafka sink does not take 'sink.delivery-guarantee' = 'exactly-once': its upserts by key give an exactly-once final state at least once")
	}
	s := &KafkaSink{table: t.Name, topic: ts[0], guarantee: guarantee, upsert: true, keyCols: u.keyCols, tsCol: tsCol, headersCol: headersCol}
	s.promise = s.onProduced
	valNames := make([]string, len(u.valCols))
	for i, c := range u.valCols {
		valNames[i] = names[c]
	}
	if len(u.valCols) < len(names) {
		s.valCols = u.valCols
	}
	if s.enc, err = format.NewEncoder(u.valFormat, columnsAt(spec, valNames, u.valCols), u.valOpts, spec.Location); err != nil {
		return nil, o.Err("option 'value.format': %v", err)
	}
	if s.keyEnc, err = format.NewEncoder(u.keyFormat, columnsAt(spec, u.keyNames, u.keyCols), u.keyOpts, spec.Location); err != nil {
		return nil, o.Err("option 'key.format': %v", err)
	}
	opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err := s.connect(ctx, o, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// processUpsert writes the rows of b as upserts: +I and +U a record of the key and the
// row, -D a tombstone of the key; -U is dropped.
func (s *KafkaSink) processUpsert(ctx context.Context, vb, kb exec.Batch, b exec.Batch) {
	n := b.Len()
	recs := make([]kgo.Record, 0, n)
	var arena []byte
	ends := make([]int, 0, 2*n)
	for i := 0; i < n; i++ {
		k := b.Kind(i)
		if k == exec.UpdateBefore {
			continue
		}
		arena = line(s.keyEnc.AppendRow(arena, kb, i))
		ends = append(ends, len(arena))
		if k != exec.Delete {
			arena = line(s.enc.AppendRow(arena, vb, i))
		}
		ends = append(ends, len(arena))
		recs = append(recs, kgo.Record{Topic: s.topic})
	}
	start := 0
	j := 0
	stamps, headers := s.metadataColumns(b)
	for i := 0; i < n; i++ {
		k := b.Kind(i)
		if k == exec.UpdateBefore {
			continue
		}
		r := &recs[j]
		if stamps != nil && stamps.IsValid(i) {
			r.Timestamp = time.UnixMilli(int64(stamps.Value(i)))
		}
		if headers != nil && headers.IsValid(i) {
			r.Headers = recordHeaders(headers, i)
		}
		kEnd, vEnd := ends[2*j], ends[2*j+1]
		r.Key = arena[start:kEnd:kEnd]
		if k != exec.Delete {
			r.Value = arena[kEnd:vEnd:vEnd]
		}
		start = vEnd
		j++
		s.cl.Produce(ctx, r, s.promise)
	}
}
