package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	bolt "go.etcd.io/bbolt"
)

// Lookup is the embedded table as a lookup join's table.
var Lookup = connector.LookupConnector{Open: openLookup}

// lookup reads the table's current rows for a lookup join, in one read transaction per
// batch of keys: by primary key when the lookup keys are the primary key's columns,
// else by a scan of the whole table (the join keeps the rows of its keys).
type lookup struct {
	table  string
	path   string
	schema string
	byKey  []int // the lookup key's column of each primary key column; nil: scan
	keyEnc format.Encoder
	dec    format.Decoder
	line   []byte
	mem    memory.Allocator
	arrow  *arrow.Schema
}

var _ exec.Lookuper = (*lookup)(nil)

func openLookup(_ context.Context, spec connector.LookupSpec) (exec.Lookuper, error) {
	t := spec.Table
	o, err := connector.NewOptions(t, []string{"path"}, false, nil)
	if err != nil {
		return nil, err
	}
	if len(t.PrimaryKey) == 0 {
		return nil, o.Err("the embedded connector needs a PRIMARY KEY")
	}
	path, err := pathOf(o, t, spec.TablesDir)
	if err != nil {
		return nil, err
	}
	dec, err := format.NewJSONDecoder(t.PhysicalSchema(), spec.Mem, format.JSONOptions{Location: time.UTC})
	if err != nil {
		return nil, o.Err("%v", err)
	}
	l := &lookup{table: t.Name, path: path, schema: schemaText(t), dec: dec, mem: spec.Mem, arrow: exec.ArrowSchema(t.PhysicalSchema())}
	phys := t.PhysicalSchema()
	if len(spec.Keys) == len(t.PrimaryKey) {
		for _, k := range t.PrimaryKey {
			at := slices.Index(spec.Keys, phys.Index(k))
			if at < 0 {
				l.byKey = nil
				break
			}
			l.byKey = append(l.byKey, at)
		}
	}
	if l.byKey != nil {
		l.keyEnc = format.NewJSONEncoder(t.PrimaryKey, format.JSONOptions{Location: time.UTC})
	}
	return l, nil
}

// Lookup returns the rows of keys (by primary key), or all rows (a scan).
func (l *lookup) Lookup(_ context.Context, keys arrow.Record) (arrow.Record, error) {
	db, err := open(l.path, true)
	if errors.Is(err, fs.ErrNotExist) {
		return l.flush()
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", l.table, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if err := checkSchema(tx, l.path, l.schema); err != nil {
			return err
		}
		rows := tx.Bucket(rowsBucket)
		if rows == nil {
			return nil
		}
		if l.byKey == nil || keys == nil {
			return rows.ForEach(func(k, v []byte) error { return l.decode(k, v) })
		}
		cols := make([]arrow.Array, len(l.byKey))
		fields := make([]arrow.Field, len(l.byKey))
		for i, at := range l.byKey {
			cols[i], fields[i] = keys.Column(at), keys.Schema().Field(at)
		}
		pk := array.NewRecord(arrow.NewSchema(fields, nil), cols, keys.NumRows())
		defer pk.Release()
		b := exec.Batch{Rec: pk}
		for i := 0; i < int(pk.NumRows()); i++ {
			l.line = l.keyEnc.AppendRow(l.line[:0], b, i)
			k := bytes.TrimSuffix(l.line, []byte("\n"))
			if v := rows.Get(k); v != nil {
				if err := l.decode(k, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if rec := l.dec.Flush(); rec != nil { // drop what was read before the failure
			rec.Release()
		}
		return nil, fmt.Errorf("table %s: %w", l.table, err)
	}
	return l.flush()
}

// decode adds a stored row to the rows being read (the decoder copies it out of the
// transaction).
func (l *lookup) decode(k, v []byte) error {
	if err := l.dec.Decode(v, 0); err != nil {
		return fmt.Errorf("row %s of %s: %w", k, l.path, err)
	}
	return nil
}

// flush returns the rows decoded, an empty record when there are none.
func (l *lookup) flush() (arrow.Record, error) {
	if rec := l.dec.Flush(); rec != nil {
		return rec, nil
	}
	b := array.NewRecordBuilder(l.mem, l.arrow)
	defer b.Release()
	return b.NewRecord(), nil
}

func (l *lookup) Close() error {
	l.dec.Release()
	return nil
}
