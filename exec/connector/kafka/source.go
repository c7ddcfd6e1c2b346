package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pollInterval is how long Next waits for records before it returns an empty batch.
const pollInterval = 50 * time.Millisecond

var errClosed = errors.New("kafka: reader is closed")

// Reader is a task of the Kafka source: it reads its share of the topic's partitions
// (partition i of the topics' partitions, in order, is task i % tasks's) from offsets
// resolved when it opens ('scan.startup.mode') or restored from a snapshot, decodes
// each record's value as one line of the table's format, and in bounded mode ends
// (io.EOF) once every partition reached the end offset resolved at the job's start.
type Reader struct {
	table       string
	task, tasks int
	opts        []kgo.Opt // of the consumer
	group       string    // 'properties.group.id', "" for none
	dec         format.Decoder
	batch       int

	admin    *kgo.Client // metadata, offsets and commits
	ids      topicIDs
	consumer *kgo.Client // created at the first Next, after a restore
	parts    []*partition
	byTP     map[topicPartition]*partition
	live     int  // partitions not at their end
	bounded  bool // 'scan.bounded.mode' is not 'unbounded'
	recs     []*kgo.Record
	next     int // recs[next:] are polled and not yet decoded
	snaps    []offsetsAt
	started  bool
	closed   bool
	origin   []recordAt // of each row decoded since the last batch

	lagMu sync.Mutex
	lag   []exec.PartitionLag // by partition of parts, as of the last Next

	raw  bool        // the value format is raw: a trailing line break is data
	up   *upserts    // upsert-kafka: the key and value decoders and the rows' kinds; nil for kafka
	meta *metaReader // the metadata columns; nil when the table has none
}

// recordAt is the record a row was decoded from.
type recordAt struct {
	topicPartition
	part   int32 // the partition's index in the reader's parts
	offset int64
}

// origin names each row of a batch by its record's topic, partition and offset.
type origin struct {
	table string
	rows  []recordAt
}

func (o origin) Row(i int) string {
	r := o.rows[i]
	return fmt.Sprintf("table %s, topic %s, partition %d, offset %d", o.table, r.Topic, r.Partition, r.offset)
}

// partition is a partition the reader owns and where it is.
type partition struct {
	topicPartition
	index  int32 // in the reader's parts
	offset int64 // of the next record to decode
	end    int64 // bounded: where it ends; -1 when unbounded
	hwm    int64 // the high watermark the last fetch reported; -1 before one
	// upsert-kafka: the last value of each key of the partition, by the key's bytes,
	// and with metadata columns the metadata of the record that holds it
	last     map[string][]byte
	lastInfo map[string]*recordInfo
}

func (p *partition) done() bool { return p.end >= 0 && p.offset >= p.end }

// offsetsAt is the position a snapshot of checkpoint id captured.
type offsetsAt struct {
	id      int64
	offsets map[topicPartition]int64
}

var (
	_ exec.Reader         = (*Reader)(nil)
	_ exec.SkipCounter    = (*Reader)(nil)
	_ exec.Snapshotter    = (*Reader)(nil)
	_ exec.Restorer       = (*Reader)(nil)
	_ exec.CommitListener = (*Reader)(nil)
	_ exec.LagReporter    = (*Reader)(nil)
)

var sourceKeys = []string{"topic", "properties.bootstrap.servers", "properties.group.id",
	"scan.startup.mode", "scan.startup.timestamp-millis", "scan.startup.specific-offsets",
	"scan.bounded.mode", "scan.bounded.timestamp-millis", "scan.bounded.specific-offsets"}

func openSource(ctx context.Context, spec connector.SourceSpec) (exec.Reader, error) {
	t := spec.Table
	tasks := max(spec.Tasks, 1)
	if spec.Tasks < 0 || spec.Task < 0 || spec.Task >= tasks {
		return nil, connector.TableError(t, connector.ErrInvalidOption, "source task %d of %d does not exist", spec.Task, spec.Tasks)
	}
	o, err := connector.NewOptions(t, sourceKeys, true, isProperty)
	if err != nil {
		return nil, err
	}
	names, err := topics(o)
	if err != nil {
		return nil, err
	}
	opts, err := clientOpts(o, t)
	if err != nil {
		return nil, err
	}
	group, _ := t.Option("properties.group.id")
	group = strings.TrimSpace(group)
	startup, err := choice(o, t, "scan.startup.mode", "group-offsets",
		"earliest-offset", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
	if err != nil {
		return nil, err
	}
	bounded, err := choice(o, t, "scan.bounded.mode", "unbounded",
		"unbounded", "latest-offset", "group-offsets", "timestamp", "specific-offsets")
	if err != nil {
		return nil, err
	}
	if (startup == "group-offsets" || bounded == "group-offsets") && group == "" {
		return nil, o.Err("option 'properties.group.id' is required with 'group-offsets'")
	}
	readCommitted := true
	switch iso, _ := t.Option("properties.isolation.level"); strings.ToLower(strings.TrimSpace(iso)) {
	case "", "read_committed":
	case "read_uncommitted":
		readCommitted = false
	default:
		return nil, o.Err("option 'properties.isolation.level' must be 'read_committed' or 'read_uncommitted', got %q", iso)
	}
	reset, err := choice(o, t, "properties.auto.offset.reset", "earliest", "earliest", "latest", "none")
	if err != nil {
		return nil, err
	}
	var startTS, endTS int64
	var startSpecific, endSpecific map[int32]int64
	if startup == "timestamp" {
		if _, err := o.Required("scan.startup.timestamp-millis"); err != nil {
			return nil, err
		}
		if startTS, err = o.Int64("scan.startup.timestamp-millis", 0, 0, 1<<62); err != nil {
			return nil, err
		}
	}
	if bounded == "timestamp" {
		if _, err := o.Required("scan.bounded.timestamp-millis"); err != nil {
			return nil, err
		}
		if endTS, err = o.Int64("scan.bounded.timestamp-millis", 0, 0, 1<<62); err != nil {
			return nil, err
		}
	}
	if startup == "specific-offsets" {
		v, err := o.Required("scan.startup.specific-offsets")
		if err != nil {
			return nil, err
		}
		if startSpecific, err = specificOffsets(o, "scan.startup.specific-offsets", v); err != nil {
			return nil, err
		}
	}
	if bounded == "specific-offsets" {
		v, err := o.Required("scan.bounded.specific-offsets")
		if err != nil {
			return nil, err
		}
		if endSpecific, err = specificOffsets(o, "scan.bounded.specific-offsets", v); err != nil {
			return nil, err
		}
	}
	if (startSpecific != nil || endSpecific != nil) && len(names) > 1 {
		return nil, o.Err("'specific-offsets' needs a single topic")
	}
	var dec format.Decoder
	if meta := formatMetadata(t); meta != nil {
		dec, err = format.NewMetadataDecoder(o.Format(), t.PhysicalSchema(), meta, spec.Mem, t.Options, spec.Location)
	} else {
		dec, err = format.NewDecoder(o.Format(), t.PhysicalSchema(), spec.Mem, t.Options, spec.Location)
	}
	if err != nil {
		return nil, o.Err("%v", err)
	}
	return newReader(ctx, spec, readerConfig{names: names, opts: opts, group: group, startup: startup, bounded: bounded,
		readCommitted: readCommitted, reset: reset, startTS: startTS, endTS: endTS,
		startSpecific: startSpecific, endSpecific: endSpecific, raw: o.Format() == format.Raw}, dec, nil)
}

// readerConfig is what a Reader reads, parsed from a table's options.
type readerConfig struct {
	names                      []string // topics
	opts                       []kgo.Opt
	group                      string
	startup, bounded           string // modes
	readCommitted              bool
	reset                      string
	startTS, endTS             int64
	startSpecific, endSpecific map[int32]int64
	raw                        bool // the format is raw: a value's trailing line break is data
}

// newReader opens a reader of cfg that decodes values with dec, or with up for an
// upsert-kafka table; it owns dec and up, also on error.
func newReader(ctx context.Context, spec connector.SourceSpec, cfg readerConfig, dec format.Decoder, up *upserts) (exec.Reader, error) {
	t := spec.Table
	tasks := max(spec.Tasks, 1)
	names, opts, group, startup, bounded := cfg.names, cfg.opts, cfg.group, cfg.startup, cfg.bounded
	readCommitted, reset := cfg.readCommitted, cfg.reset
	startTS, endTS, startSpecific, endSpecific := cfg.startTS, cfg.endTS, cfg.startSpecific, cfg.endSpecific
	admin, err := kgo.NewClient(opts...)
	if err != nil {
		dec.Release()
		up.release()
		return nil, connector.TableError(t, connector.ErrInvalidOption, "%v", err)
	}
	r := &Reader{
		table: t.Name, task: spec.Task, tasks: tasks, group: group, dec: dec, batch: spec.BatchSize,
		admin: admin, byTP: map[topicPartition]*partition{}, bounded: bounded != "unbounded", raw: cfg.raw, up: up,
	}
	if r.meta, err = newMetaReader(t, spec.Mem); err != nil {
		r.Close()
		return nil, err
	}
	if r.batch <= 0 {
		r.batch = connector.DefaultBatchSize
	}
	r.opts = append(opts, kgo.KeepControlRecords(), kgo.FetchMaxWait(pollInterval))
	if readCommitted {
		r.opts = append(r.opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	fail := func(err error) (exec.Reader, error) {
		r.Close()
		return nil, tableErr(t.Name, err)
	}
	all, ids, err := metadata(ctx, admin, names)
	if err != nil {
		return fail(err)
	}
	r.ids = ids
	var mine []topicPartition
	for i, tp := range all {
		if i%tasks == spec.Task {
			mine = append(mine, tp)
		}
	}
	// Where each partition starts: a concrete offset now, so that a snapshot taken
	// before the first record names it.
	start, err := r.resolve(ctx, mine, startup, startTS, startSpecific, reset, readCommitted)
	if err != nil {
		return fail(err)
	}
	end := map[topicPartition]int64{}
	if r.bounded {
		if end, err = r.resolve(ctx, mine, bounded, endTS, endSpecific, "latest", readCommitted); err != nil {
			return fail(err)
		}
	}
	for _, tp := range mine {
		p := &partition{topicPartition: tp, index: int32(len(r.parts)), offset: start[tp], end: -1, hwm: -1}
		if up != nil {
			p.last = map[string][]byte{}
			if r.meta != nil {
				p.lastInfo = map[string]*recordInfo{}
			}
		}
		if r.bounded {
			p.end = end[tp]
		}
		r.parts = append(r.parts, p)
		r.byTP[tp] = p
	}
	return r, nil
}

// resolve turns a startup (or bounded) mode into an offset per partition.
// Group offsets fall back to reset ('earliest' or 'latest'; 'none' is an error) for
// partitions the group has none of; specific offsets fall back to the group's, then to
// earliest.
func (r *Reader) resolve(ctx context.Context, tps []topicPartition, mode string, ts int64, specific map[int32]int64, reset string, readCommitted bool) (map[topicPartition]int64, error) {
	switch mode {
	case "earliest-offset":
		return listOffsets(ctx, r.admin, tps, earliestTimestamp, readCommitted)
	case "latest-offset":
		return listOffsets(ctx, r.admin, tps, latestTimestamp, readCommitted)
	case "timestamp":
		return listOffsets(ctx, r.admin, tps, ts, readCommitted)
	}
	out := map[topicPartition]int64{}
	var rest []topicPartition
	for _, tp := range tps {
		if o, ok := specific[tp.Partition]; ok {
			out[tp] = o
		} else {
			rest = append(rest, tp)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	var got map[topicPartition]committed
	if r.group != "" {
		var err error
		if got, err = fetchCommitted(ctx, r.admin, r.group, rest); err != nil {
			return nil, err
		}
	}
	var missing []topicPartition
	for _, tp := range rest {
		if c, ok := got[tp]; ok {
			out[tp] = c.Offset
		} else {
			missing = append(missing, tp)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ts = earliestTimestamp
	switch {
	case mode == "specific-offsets":
	case reset == "latest":
		ts = latestTimestamp
	case reset == "none":
		return nil, fmt.Errorf("group %q has no offset for %s and 'properties.auto.offset.reset' is 'none'", r.group, missing[0])
	}
	fallback, err := listOffsets(ctx, r.admin, missing, ts, readCommitted)
	if err != nil {
		return nil, err
	}
	for tp, o := range fallback {
		out[tp] = o
	}
	return out, nil
}

// Skipped returns how many malformed records were skipped (with the format's
// ignore-parse-errors option).
func (r *Reader) Skipped() int64 {
	if r.up != nil {
		return r.up.skipped()
	}
	return r.dec.Skipped()
}

// Next returns the next batch of up to the batch size rows: it decodes what an earlier
// poll left, then polls once (waiting at most the poll interval) and returns what it
// has; see exec.Reader.
func (r *Reader) Next(ctx context.Context) (exec.Batch, error) {
	if r.closed {
		return exec.Batch{}, errClosed
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			return exec.Batch{}, err
		}
	}
	polled := false
	for r.dec.Rows() < r.batch {
		if r.next < len(r.recs) {
			rec := r.recs[r.next]
			r.recs[r.next] = nil
			r.next++
			if err := r.record(rec); err != nil {
				return exec.Batch{}, err
			}
			continue
		}
		if polled || r.live == 0 {
			break
		}
		if err := r.poll(ctx); err != nil {
			return exec.Batch{}, err
		}
		polled = true
	}
	r.noteLag()
	if r.dec.Rows() == 0 {
		if r.bounded && r.live == 0 {
			return exec.Batch{}, io.EOF
		}
		if r.live == 0 { // unbounded, with no partition: idle
			if err := sleep(ctx, pollInterval); err != nil {
				return exec.Batch{}, err
			}
		}
		return exec.Batch{}, nil
	}
	o := origin{table: r.table, rows: r.origin}
	splits := r.splits()
	r.origin = nil // the batch keeps it
	if r.up != nil {
		rec, kinds := r.up.flush()
		if r.meta != nil {
			rec = r.meta.merge(rec)
		}
		return exec.Batch{Rec: rec, Kinds: kinds, Origin: o, Splits: splits}, nil
	}
	rec := r.dec.Flush()
	if r.meta != nil {
		rec = r.meta.merge(rec)
	}
	return exec.Batch{Rec: rec, Kinds: r.dec.Kinds(), Origin: o, Splits: splits}, nil
}

// splits says which partition each row of the batch comes from, and which partitions
// may still bring rows (see exec.Splits): those neither at their end nor read up to the
// high watermark of their last fetch. Nil for a task of one partition.
func (r *Reader) splits() *exec.Splits {
	if len(r.parts) < 2 {
		return nil
	}
	s := &exec.Splits{Of: make([]int32, len(r.origin)), Holding: make([]bool, len(r.parts))}
	for i, at := range r.origin {
		s.Of[i] = at.part
	}
	for i, p := range r.parts {
		s.Holding[i] = !p.done() && (p.hwm < 0 || p.offset < p.hwm)
	}
	return s
}

// start creates the consumer of the partitions not at their end.
func (r *Reader) start() error {
	assign := map[string]map[int32]kgo.Offset{}
	for _, p := range r.parts {
		if p.done() {
			continue
		}
		if assign[p.Topic] == nil {
			assign[p.Topic] = map[int32]kgo.Offset{}
		}
		assign[p.Topic][p.Partition] = kgo.NewOffset().At(p.offset)
		r.live++
	}
	if r.live == 0 {
		return nil
	}
	cl, err := kgo.NewClient(append(r.opts, kgo.ConsumePartitions(assign))...)
	if err != nil {
		return tableErr(r.table, err)
	}
	r.consumer = cl
	return nil
}

// poll fetches records, waiting at most the poll interval.
func (r *Reader) poll(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, pollInterval)
	defer cancel()
	fs := r.consumer.PollRecords(pctx, r.batch)
	for _, fe := range fs.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("table %s: topic %s, partition %d: %w", r.table, fe.Topic, fe.Partition, fe.Err)
	}
	r.recs, r.next = r.recs[:0], 0
	fs.EachRecord(func(rec *kgo.Record) { r.recs = append(r.recs, rec) })
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if p := r.byTP[topicPartition{fp.Topic, fp.Partition}]; p != nil && fp.HighWatermark >= 0 {
			p.hwm = fp.HighWatermark
		}
	})
	return nil
}

// noteLag records how far each partition is behind its high watermark, for Lag.
func (r *Reader) noteLag() {
	r.lagMu.Lock()
	defer r.lagMu.Unlock()
	if len(r.lag) != len(r.parts) {
		r.lag = make([]exec.PartitionLag, len(r.parts))
	}
	for i, p := range r.parts {
		lag := int64(0)
		if p.hwm >= 0 {
			lag = max(0, p.hwm-p.offset)
		}
		r.lag[i] = exec.PartitionLag{Topic: p.Topic, Partition: p.Partition, Lag: lag}
	}
}

// Lag returns each partition's high watermark minus the reader's position, as of the
// last Next; a partition no fetch reported on yet has lag 0.
func (r *Reader) Lag() []exec.PartitionLag {
	r.lagMu.Lock()
	defer r.lagMu.Unlock()
	return append([]exec.PartitionLag(nil), r.lag...)
}

// record decodes one record of a partition the reader owns, or skips it: a control
// record (a transaction marker), a tombstone, a record past the partition's end or
// before its position.
func (r *Reader) record(rec *kgo.Record) error {
	p := r.byTP[topicPartition{rec.Topic, rec.Partition}]
	if p == nil || p.done() || rec.Offset < p.offset {
		return nil
	}
	if p.end >= 0 && rec.Offset >= p.end {
		r.finish(p)
		return nil
	}
	if r.up != nil && !rec.Attrs.IsControl() {
		if err := r.upsert(p, rec); err != nil {
			return r.decodeErr(p, rec, err)
		}
	} else if !rec.Attrs.IsControl() && rec.Value != nil {
		line := rec.Value
		if !r.raw {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, newline), carriageReturn)
		}
		before := r.dec.Rows()
		if err := r.dec.Decode(line, rec.Offset+1); err != nil {
			return r.decodeErr(p, rec, err)
		}
		if before == 0 {
			r.origin = make([]recordAt, 0, r.batch)
		}
		for range r.dec.Rows() - before {
			r.origin = append(r.origin, recordAt{p.topicPartition, p.index, rec.Offset})
		}
		if r.meta != nil {
			info := infoOf(rec)
			r.meta.add(&info, r.dec.Rows()-before)
		}
	}
	p.offset = rec.Offset + 1
	if p.done() {
		r.finish(p)
	}
	return nil
}

var (
	newline        = []byte{'\n'}
	carriageReturn = []byte{'\r'}
)

// finish stops fetching a partition that reached its end.
func (r *Reader) finish(p *partition) {
	p.offset = max(p.offset, p.end)
	r.live--
	r.consumer.PauseFetchPartitions(map[string][]int32{p.Topic: {p.Partition}})
}

// decodeErr names the record a decoder rejected.
func (r *Reader) decodeErr(p *partition, rec *kgo.Record, err error) error {
	var pe *format.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("table %s: topic %s, partition %d, offset %d: %w", r.table, p.Topic, p.Partition, rec.Offset, err)
	}
	msg := pe.Msg
	if pe.Column != "" {
		msg += " for column " + pe.Column
	}
	return &recordError{msg: fmt.Sprintf("table %s: topic %s, partition %d, offset %d: %s: %q",
		r.table, p.Topic, p.Partition, rec.Offset, msg, clip(pe.Text)), err: pe}
}

// recordError is a malformed record; it unwraps to the *format.ParseError.
type recordError struct {
	msg string
	err error
}

func (e *recordError) Error() string { return e.msg }
func (e *recordError) Unwrap() error { return e.err }

// clip cuts a record's text for an error message.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Close closes the clients and frees the decoder.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.consumer != nil {
		r.consumer.Close()
	}
	r.admin.Close()
	if r.up != nil {
		r.up.release() // r.dec is its value decoder
	} else {
		if rec := r.dec.Flush(); rec != nil {
			rec.Release()
		}
		r.dec.Release()
	}
	r.meta.release()
	r.recs = nil
	return nil
}
