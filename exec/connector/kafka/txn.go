package kafka

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// spool is the exactly-once protocol of a KafkaSink task. Kafka cannot resume another
// process's transaction, so a checkpoint's rows wait in a file until the checkpoint
// completes:
//
//   - Process appends rows to the open spool file of the sink task (run R):
//     kafka-<sink id>.<R>.open in the job's sink state directory.
//   - Snapshot(n) syncs the file and renames it kafka-<sink id>.<R>.<n>.spool (an
//     "epoch"); the state names R, n and the epochs not yet committed, with the size
//     of each file, so that a file cut short at a record's end is not taken for a
//     whole one (each record carries a checksum against other damage).
//   - CheckpointComplete(n) produces every pending epoch <= n in one Kafka transaction
//     of the task's transactional id, prefix-<task>, which also commits, as group
//     prefix-<task>, offset n with metadata R on partition 0 of the topic (the
//     marker). Data and marker become visible together or not at all. Then it deletes
//     the epochs' files.
//   - A new sink fences its transactional id at open: Kafka aborts what a crashed
//     predecessor left open. Restore(state) removes the files the state does not name
//     (epochs of failed attempts, open files, other runs); at the first call after it
//     (which has a context) the sink reads the marker, stable, and commits in one
//     transaction, with a new marker, only the pending epochs above it when the
//     marker is of run R. So each epoch is committed once, whenever the crash.
//
// R, a random id drawn when a sink starts without state, tells this run's markers from
// those of earlier runs of the same job, whose checkpoint ids started over.
type spool struct {
	s       *KafkaSink
	dir     string
	name    string // the sink id, made safe for file names
	txnID   string
	timeout time.Duration // of a transaction
	header  stateHeader
	run     string

	open    *os.File
	w       *bufio.Writer
	pending []int64         // sealed epochs not committed, ascending
	sizes   map[int64]int64 // the size of each pending epoch's file; absent in older states
	// meta: this sink writes METADATA columns, so its records carry a timestamp and
	// headers; withMeta are the pending epochs whose files were written so.
	meta     bool
	withMeta map[int64]bool
	written  int64 // bytes written to the open file
	last     int64 // the last checkpoint sealed

	restored bool // Restore ran; begin recovers
	begun    bool
	scratch  []byte
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// openSpool fences the transactional id (aborting a predecessor's open transaction)
// and prepares the spool of a fresh run.
func openSpool(ctx context.Context, s *KafkaSink, spec connector.SinkSpec, txnID string, timeout time.Duration) (*spool, error) {
	id := spec.ID
	if id == "" {
		id = txnID
	}
	run, err := newRunID()
	if err != nil {
		return nil, tableErr(s.table, err)
	}
	sp := &spool{
		s: s, dir: spec.StateDir, name: unsafeChars.ReplaceAllString(id, "_"), txnID: txnID, timeout: timeout, run: run,
		meta:   s.tsCol >= 0 || s.headersCol >= 0,
		header: stateHeader{Version: stateVersion, Connector: "kafka", Table: spec.Table.Name, Task: spec.Task, Tasks: max(spec.Tasks, 1)},
	}
	if err := os.MkdirAll(sp.dir, 0o700); err != nil {
		return nil, tableErr(s.table, err)
	}
	if _, _, err := s.cl.ProducerID(ctx); err != nil {
		return nil, fmt.Errorf("table %s: initializing transactional id %s: %w", s.table, txnID, err)
	}
	return sp, nil
}

func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

var runPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

func (sp *spool) openPath() string {
	return filepath.Join(sp.dir, "kafka-"+sp.name+"."+sp.run+".open")
}

func (sp *spool) epochPath(epoch int64) string {
	return filepath.Join(sp.dir, "kafka-"+sp.name+"."+sp.run+"."+strconv.FormatInt(epoch, 10)+".spool")
}

// files lists this sink task's spool files, of every run.
func (sp *spool) files() ([]string, error) {
	entries, err := os.ReadDir(sp.dir)
	if err != nil {
		return nil, err
	}
	var out []string
	prefix := "kafka-" + sp.name + "."
	for _, e := range entries {
		n := e.Name()
		if rest, ok := strings.CutPrefix(n, prefix); ok && runPattern.MatchString(strings.SplitN(rest, ".", 2)[0]) {
			out = append(out, filepath.Join(sp.dir, n))
		}
	}
	return out, nil
}

// removeExcept removes this task's spool files other than keep.
func (sp *spool) removeExcept(keep map[string]bool) error {
	files, err := sp.files()
	if err != nil {
		return err
	}
	for _, f := range files {
		if !keep[f] {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// begin runs before the first rows, barrier or commit: a fresh run removes what
// earlier runs left; a restored one commits the restored pending epochs.
func (sp *spool) begin(ctx context.Context) error {
	if sp.begun {
		return nil
	}
	sp.begun = true
	if !sp.restored {
		if err := sp.removeExcept(nil); err != nil {
			return tableErr(sp.s.table, err)
		}
		return nil
	}
	return sp.recover(ctx)
}

// recordMeta is what a spooled record carries besides its key and value when the sink
// writes METADATA columns: the record's timestamp (Unix milliseconds) and headers.
type recordMeta struct {
	timestamp    int64
	hasTimestamp bool // false: the producer's clock
	headers      []kgo.RecordHeader
}

// write appends a record to the open spool file: the key's length + 1 (0: no key),
// the key, the value's length, the value, with meta (when the sink writes METADATA
// columns) the metadata, and the CRC-32C of all that, so that a damaged spool is never
// produced. The metadata is a uvarint 0 or 1 (with a timestamp), the timestamp as a
// varint, the number of headers, and each header's key length and key, its value's
// length + 1 (0: no value) and value.
func (sp *spool) write(key, value []byte, meta *recordMeta) error {
	if sp.open == nil {
		f, err := os.OpenFile(sp.openPath(), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return tableErr(sp.s.table, err)
		}
		sp.open, sp.w, sp.written = f, bufio.NewWriterSize(f, 1<<20), 0
	}
	b := sp.scratch[:0]
	if key == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(key))+1)
		b = append(b, key...)
	}
	b = binary.AppendUvarint(b, uint64(len(value)))
	b = append(b, value...)
	if meta != nil {
		if meta.hasTimestamp {
			b = binary.AppendUvarint(b, 1)
			b = binary.AppendVarint(b, meta.timestamp)
		} else {
			b = binary.AppendUvarint(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(meta.headers)))
		for _, h := range meta.headers {
			b = binary.AppendUvarint(b, uint64(len(h.Key)))
			b = append(b, h.Key...)
			if h.Value == nil {
				b = binary.AppendUvarint(b, 0)
			} else {
				b = binary.AppendUvarint(b, uint64(len(h.Value))+1)
				b = append(b, h.Value...)
			}
		}
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	sp.scratch = b
	if _, err := sp.w.Write(b); err != nil {
		return tableErr(sp.s.table, err)
	}
	sp.written += int64(len(b))
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// flush writes out buffered rows.
func (sp *spool) flush() error {
	if sp.w == nil {
		return nil
	}
	if err := sp.w.Flush(); err != nil {
		return tableErr(sp.s.table, err)
	}
	return nil
}

// sinkState is an exactly-once sink's snapshot: the run, the checkpoint and the
// epochs whose rows are spooled and not yet known committed, e.g.
//
//	{"version":1,"connector":"kafka","table":"out","task":0,"tasks":2,
//	 "run":"9f3c2a0b5d6e7f81","checkpoint":12,"pending":[11,12]}
type sinkState struct {
	stateHeader
	Run        string  `json:"run"`
	Checkpoint int64   `json:"checkpoint"`
	Pending    []int64 `json:"pending"`
	// Sizes are the sizes of the pending epochs' files, by epoch (absent in states of
	// older versions, whose files are read without that check).
	Sizes map[int64]int64 `json:"sizes,omitempty"`
	// Meta are the pending epochs whose records carry a timestamp and headers (see
	// spool.write); absent in states of older versions, which never wrote them.
	Meta []int64 `json:"meta,omitempty"`
}

// sortedEpochs returns the epochs of set in ascending order, nil for none.
func sortedEpochs(set map[int64]bool) []int64 {
	var out []int64
	for e := range set {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// seal makes the rows since the last barrier epoch id: synced under their final name
// before the checkpoint can complete.
func (sp *spool) seal(ctx context.Context, id int64) ([]byte, error) {
	if err := sp.begin(ctx); err != nil {
		return nil, err
	}
	if id <= sp.last {
		return nil, fmt.Errorf("table %s: checkpoint %d after checkpoint %d", sp.s.table, id, sp.last)
	}
	if sp.open != nil {
		err := sp.w.Flush()
		if err == nil {
			err = sp.open.Sync()
		}
		if cerr := sp.open.Close(); err == nil {
			err = cerr
		}
		sp.open, sp.w = nil, nil
		if err == nil {
			err = os.Rename(sp.openPath(), sp.epochPath(id))
		}
		if err == nil {
			err = connector.SyncDir(sp.dir)
		}
		if err != nil {
			return nil, tableErr(sp.s.table, err)
		}
		sp.pending = append(sp.pending, id)
		if sp.sizes == nil {
			sp.sizes = map[int64]int64{}
		}
		sp.sizes[id] = sp.written
		if sp.meta {
			if sp.withMeta == nil {
				sp.withMeta = map[int64]bool{}
			}
			sp.withMeta[id] = true
		}
	}
	sp.last = id
	return json.Marshal(sinkState{stateHeader: sp.header, Run: sp.run, Checkpoint: id, Pending: sp.pending, Sizes: sp.sizes, Meta: sortedEpochs(sp.withMeta)})
}

// restore takes up a snapshot: its run, checkpoint and pending epochs; files it does
// not name are removed. The pending epochs are committed by begin.
func (sp *spool) restore(state []byte) error {
	if sp.begun {
		return fmt.Errorf("table %s: cannot restore a kafka sink that has written", sp.s.table)
	}
	var st sinkState
	if err := decodeState(state, sp.header, "sink", &st); err != nil {
		return err
	}
	if !runPattern.MatchString(st.Run) {
		return sp.header.err("sink", "corrupt state: run %q", st.Run)
	}
	for i, e := range st.Pending {
		if e <= 0 || e > st.Checkpoint || (i > 0 && e <= st.Pending[i-1]) {
			return sp.header.err("sink", "corrupt state: pending checkpoints %v of checkpoint %d", st.Pending, st.Checkpoint)
		}
	}
	for e, n := range st.Sizes {
		if n <= 0 || !slices.Contains(st.Pending, e) {
			return sp.header.err("sink", "corrupt state: size %d of checkpoint %d, pending %v", n, e, st.Pending)
		}
	}
	sp.withMeta = nil
	for _, e := range st.Meta {
		if !slices.Contains(st.Pending, e) {
			return sp.header.err("sink", "corrupt state: checkpoint %d with metadata, pending %v", e, st.Pending)
		}
		if sp.withMeta == nil {
			sp.withMeta = map[int64]bool{}
		}
		sp.withMeta[e] = true
	}
	sp.run, sp.last, sp.pending, sp.sizes, sp.restored = st.Run, st.Checkpoint, st.Pending, st.Sizes, true
	keep := map[string]bool{}
	for _, e := range sp.pending {
		keep[sp.epochPath(e)] = true
	}
	if err := sp.removeExcept(keep); err != nil {
		return tableErr(sp.s.table, err)
	}
	return nil
}

// recover commits the restored pending epochs that the marker does not show
// committed.
func (sp *spool) recover(ctx context.Context) error {
	if len(sp.pending) == 0 {
		return nil
	}
	marker, err := sp.marker(ctx)
	if err != nil {
		return err
	}
	var todo []int64
	for _, e := range sp.pending {
		if e > marker {
			if _, err := os.Stat(sp.epochPath(e)); err != nil {
				return fmt.Errorf("table %s: the rows of checkpoint %d are not committed and their spool is gone: %w", sp.s.table, e, err)
			}
			todo = append(todo, e)
		}
	}
	return sp.commitEpochs(ctx, todo, len(sp.pending))
}

// marker returns the last epoch this run committed, or 0.
func (sp *spool) marker(ctx context.Context) (int64, error) {
	tp := topicPartition{sp.s.topic, 0}
	got, err := fetchCommitted(ctx, sp.s.cl, sp.txnID, []topicPartition{tp})
	if err != nil {
		return 0, fmt.Errorf("table %s: reading the commit marker of transactional id %s: %w", sp.s.table, sp.txnID, err)
	}
	if c, ok := got[tp]; ok && c.Metadata == sp.run {
		return c.Offset, nil
	}
	return 0, nil
}

// commit commits the pending epochs up to checkpoint id.
func (sp *spool) commit(ctx context.Context, id int64) error {
	if err := sp.begin(ctx); err != nil {
		return err
	}
	n := 0
	for n < len(sp.pending) && sp.pending[n] <= id {
		n++
	}
	return sp.commitEpochs(ctx, slices.Clone(sp.pending[:n]), n)
}

// commitEpochs produces epochs in one transaction with the marker of the last, then
// deletes the files of the first drop pending epochs (todo and those already
// committed).
//
// A commit once begun is finished even when ctx is cancelled (the job stopping, or
// ending right after its final checkpoint), within the transaction timeout: an
// interrupted EndTxn leaves its outcome unknown until the next sink's recovery.
func (sp *spool) commitEpochs(ctx context.Context, todo []int64, drop int) error {
	if len(todo) > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sp.timeout)
		defer cancel()
		if err := sp.transact(ctx, todo); err != nil {
			return fmt.Errorf("table %s: committing checkpoint %d to topic %s: %w", sp.s.table, todo[len(todo)-1], sp.s.topic, err)
		}
	}
	for _, e := range sp.pending[:drop] {
		if err := os.Remove(sp.epochPath(e)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return tableErr(sp.s.table, err)
		}
		delete(sp.sizes, e)
		delete(sp.withMeta, e)
	}
	sp.pending = append(sp.pending[:0], sp.pending[drop:]...)
	return nil
}

// transact produces the records of epochs and the marker in one transaction. On an
// error it tries to abort; a crash leaves the transaction to the next sink's fencing.
func (sp *spool) transact(ctx context.Context, epochs []int64) (err error) {
	cl := sp.s.cl
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if aerr := cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort); aerr != nil {
				err = errors.Join(err, fmt.Errorf("aborting: %w", aerr))
			}
		}
	}()
	for _, e := range epochs {
		if err := sp.produceEpoch(ctx, e); err != nil {
			return err
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err := sp.s.err(); err != nil {
		return err
	}
	if err := sp.commitMarker(ctx, epochs[len(epochs)-1]); err != nil {
		return err
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}

// produceEpoch produces the records of an epoch's spool file.
func (sp *spool) produceEpoch(ctx context.Context, epoch int64) error {
	f, err := os.Open(sp.epochPath(epoch))
	if err != nil {
		return err
	}
	defer f.Close()
	size, known := sp.sizes[epoch]
	if !known {
		size = -1
	}
	var recs []kgo.Record // the client keeps each record until it is acknowledged
	err = readSpool(f, size, sp.withMeta[epoch], func(key, value []byte, meta *recordMeta) error {
		if len(recs) == cap(recs) {
			recs = make([]kgo.Record, 0, 4096)
		}
		recs = append(recs, kgo.Record{Topic: sp.s.topic, Key: key, Value: value})
		if r := &recs[len(recs)-1]; meta != nil {
			if meta.hasTimestamp {
				r.Timestamp = time.UnixMilli(meta.timestamp)
			}
			r.Headers = meta.headers
		}
		sp.s.cl.Produce(ctx, &recs[len(recs)-1], sp.s.promise)
		return nil
	})
	if err != nil {
		return corruptSpool(f, err)
	}
	return nil
}

// readSpool calls each with the key, value and (withMeta: the file's records carry
// them; valid until each returns, but for the headers) metadata of every record of a spool file of size bytes (-1: not known) read
// from f, and returns an error when the file is not one whole spool: a size that
// differs, a record cut short or too long, a checksum that does not match. The client
// keeps each record until it is acknowledged, so keys and values are cut from slabs
// that are never reused.
func readSpool(f io.Reader, size int64, withMeta bool, each func(key, value []byte, meta *recordMeta) error) error {
	buf := 64 << 10 // bytes read at a time: no more than a file of known size needs
	if size >= 0 {
		buf = int(min(max(size, 16), 1<<20))
	}
	r := &spoolReader{r: bufio.NewReaderSize(f, buf), size: size}
	for {
		r.sum = 0
		klen, err := r.uvarint()
		if err == io.EOF {
			if size >= 0 && r.read != size {
				return fmt.Errorf("%d bytes, want %d", r.read, size)
			}
			return nil
		}
		if err != nil {
			return err
		}
		var key []byte
		if klen > 0 {
			if key, err = r.take(klen - 1); err != nil {
				return err
			}
		}
		vlen, err := r.uvarint()
		if err != nil {
			return err
		}
		value, err := r.take(vlen)
		if err != nil {
			return err
		}
		var meta *recordMeta
		if withMeta {
			if meta, err = r.meta(); err != nil {
				return err
			}
		}
		want := r.sum
		n, err := io.ReadFull(r.r, r.sum4[:])
		r.read += int64(n)
		if err != nil {
			return err
		}
		if binary.BigEndian.Uint32(r.sum4[:]) != want {
			return errors.New("checksum mismatch")
		}
		if size >= 0 && r.read > size {
			return fmt.Errorf("more than %d bytes", size)
		}
		if err := each(key, value, meta); err != nil {
			return err
		}
	}
}

// spoolReader reads the parts of spooled records, counting the bytes read and
// summing those of the record being read.
type spoolReader struct {
	r    *bufio.Reader
	size int64 // of the file, -1: not known
	read int64
	sum  uint32 // the CRC-32C of the record so far
	slab []byte
	next uint64  // the size of the next slab: doubling up to 1 MiB
	one  [1]byte // the byte ReadByte sums, without an allocation
	sum4 [4]byte // a record's checksum as read
	m    recordMeta
}

func (r *spoolReader) ReadByte() (byte, error) {
	b, err := r.r.ReadByte()
	if err == nil {
		r.read++
		r.one[0] = b
		r.sum = crc32.Update(r.sum, castagnoli, r.one[:])
	}
	return b, err
}

func (r *spoolReader) uvarint() (uint64, error) { return binary.ReadUvarint(r) }

// take reads the next n bytes into a slab.
func (r *spoolReader) take(n uint64) ([]byte, error) {
	if n > 1<<30 || (r.size >= 0 && n > uint64(r.size-r.read)) {
		return nil, errors.New("record too long")
	}
	if uint64(cap(r.slab)-len(r.slab)) < n {
		r.next = min(max(2*r.next, 4<<10), 1<<20)
		r.slab = make([]byte, 0, max(n, r.next))
	}
	b := r.slab[len(r.slab) : len(r.slab)+int(n) : len(r.slab)+int(n)]
	r.slab = r.slab[:len(r.slab)+int(n)]
	got, err := io.ReadFull(r.r, b)
	r.read += int64(got)
	r.sum = crc32.Update(r.sum, castagnoli, b[:got])
	return b, err
}

// meta reads a record's metadata (see spool.write) into r.m, valid until the next
// record; its headers are the record's own.
func (r *spoolReader) meta() (*recordMeta, error) {
	m := &r.m
	*m = recordMeta{}
	has, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	switch has {
	case 0:
	case 1:
		m.hasTimestamp = true
		if m.timestamp, err = binary.ReadVarint(r); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("bad timestamp flag")
	}
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	if n > 1<<20 {
		return nil, errors.New("too many headers")
	}
	for range n {
		klen, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		key, err := r.take(klen)
		if err != nil {
			return nil, err
		}
		h := kgo.RecordHeader{Key: string(key)}
		vlen, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if vlen > 0 {
			if h.Value, err = r.take(vlen - 1); err != nil {
				return nil, err
			}
			if h.Value == nil {
				h.Value = []byte{} // an empty value, not none
			}
		}
		m.headers = append(m.headers, h)
	}
	return m, nil
}

func corruptSpool(f *os.File, err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("spool %s is corrupt: %w (%w)", f.Name(), err, connector.ErrDamaged)
}

// commitMarker commits, inside the open transaction, offset epoch with the run as
// metadata for group txnID on partition 0 of the topic.
func (sp *spool) commitMarker(ctx context.Context, epoch int64) error {
	cl := sp.s.cl
	pid, pepoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = sp.txnID, pid, pepoch, sp.txnID
	for {
		resp, err := add.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil {
			break
		}
		if !kerr.IsRetriable(err) {
			return fmt.Errorf("adding the commit marker to the transaction: %w", err)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = sp.txnID, sp.txnID, pid, pepoch
	req.Generation = -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = sp.s.topic, sp.s.topicID
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = 0, epoch, -1, kmsg.StringPtr(sp.run)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	for {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		var perr error
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && perr == nil {
					perr = e
				}
			}
		}
		if perr == nil {
			return nil
		}
		if !kerr.IsRetriable(perr) {
			return fmt.Errorf("committing the commit marker: %w", perr)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// close closes the open spool file; it stays for the next sink to remove.
func (sp *spool) close() error {
	if sp.open == nil {
		return nil
	}
	err := sp.open.Close()
	sp.open, sp.w = nil, nil
	return err
}
