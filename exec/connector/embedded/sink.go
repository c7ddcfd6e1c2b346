package embedded

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	bolt "go.etcd.io/bbolt"
)

// sink applies a changelog to the table: +I and +U put the row under its key, -D
// deletes the key, -U needs no write (the +U after it overwrites). Changes are folded
// by key in memory and written in one transaction on every barrier, at the end of the
// input, when maxBuffered keys wait, and at least every flushInterval otherwise.
// Replayed changes rewrite the same rows, so after a recovery the table's final
// content is exactly a failure-free run's.
type sink struct {
	table  string
	path   string
	schema string
	keys   []int // the primary key's columns in the rows received
	keyEnc format.Encoder
	rowEnc format.Encoder

	pending   map[string][]byte // key → encoded row; nil: delete
	lastFlush time.Time
	line      []byte
}

var _ connector.Sink = (*sink)(nil)

const (
	maxBuffered   = 64 << 10
	flushInterval = time.Second
)

func openSink(_ context.Context, spec connector.SinkSpec) (connector.Sink, error) {
	t := spec.Table
	o, err := connector.NewOptions(t, []string{"path"}, false, nil)
	if err != nil {
		return nil, err
	}
	if len(t.PrimaryKey) == 0 {
		return nil, o.Err("the embedded connector needs a PRIMARY KEY to apply upserts and deletes by")
	}
	path, err := pathOf(o, t, spec.TablesDir)
	if err != nil {
		return nil, err
	}
	s := &sink{table: t.Name, path: path, schema: schemaText(t), pending: map[string][]byte{}, lastFlush: time.Now()}
	phys := t.PhysicalSchema()
	names := make([]string, len(phys))
	for i, c := range phys {
		names[i] = c.Name
	}
	for _, k := range t.PrimaryKey {
		i := phys.Index(k)
		if i < 0 {
			return nil, o.Err("primary key column %s is not a column of the table", k)
		}
		s.keys = append(s.keys, i)
	}
	s.rowEnc = format.NewJSONEncoder(names, format.JSONOptions{Location: time.UTC})
	s.keyEnc = format.NewJSONEncoder(t.PrimaryKey, format.JSONOptions{Location: time.UTC})
	return s, nil
}

// Process folds the changes of b into the pending writes.
func (s *sink) Process(ctx context.Context, _ int, b exec.Batch) error {
	n := b.Len()
	if n == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(s.keys))
	for i, k := range s.keys {
		cols[i] = b.Rec.Column(k)
	}
	keyRec := array.NewRecord(arrow.NewSchema(keyFields(b.Rec.Schema(), s.keys), nil), cols, b.Rec.NumRows())
	defer keyRec.Release()
	keys := exec.Batch{Rec: keyRec}
	for i := 0; i < n; i++ {
		kind := b.Kind(i)
		if kind == exec.UpdateBefore {
			continue
		}
		s.line = s.keyEnc.AppendRow(s.line[:0], keys, i)
		key := string(bytes.TrimSuffix(s.line, []byte("\n")))
		if kind == exec.Delete {
			s.pending[key] = nil
			continue
		}
		s.line = s.rowEnc.AppendRow(s.line[:0], b, i)
		s.pending[key] = bytes.Clone(bytes.TrimSuffix(s.line, []byte("\n")))
	}
	if len(s.pending) >= maxBuffered {
		return s.flush()
	}
	return nil
}

func keyFields(schema *arrow.Schema, keys []int) []arrow.Field {
	fields := make([]arrow.Field, len(keys))
	for i, k := range keys {
		fields[i] = schema.Field(k)
	}
	return fields
}

// Flush writes the pending changes when the flush interval has passed.
func (s *sink) Flush(context.Context) error {
	if time.Since(s.lastFlush) < flushInterval {
		return nil
	}
	return s.flush()
}

// Snapshot writes the pending changes on the barrier: the table then holds at least
// everything before it. The sink keeps no state of its own.
func (s *sink) Snapshot(context.Context, int64) ([]byte, error) { return nil, s.flush() }

func (s *sink) Finish(context.Context) error { return s.flush() }

func (s *sink) Close() error { return nil }

// flush writes the pending changes in one transaction.
func (s *sink) flush() error {
	s.lastFlush = time.Now()
	if len(s.pending) == 0 {
		return nil
	}
	db, err := open(s.path, false)
	if err != nil {
		return fmt.Errorf("table %s: %w", s.table, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := checkSchema(tx, s.path, s.schema); err != nil {
			return err
		}
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		if err := meta.Put(schemaKey, []byte(s.schema)); err != nil {
			return err
		}
		rows, err := tx.CreateBucketIfNotExists(rowsBucket)
		if err != nil {
			return err
		}
		for k, v := range s.pending {
			if v == nil {
				err = rows.Delete([]byte(k))
			} else {
				err = rows.Put([]byte(k), v)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", s.table, err)
	}
	clear(s.pending)
	return nil
}
