package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/exec/format"
	bolt "go.etcd.io/bbolt"
)

// reader scans the table once, in key order, a chunk of rows per transaction so that
// a job writing the table waits at most one chunk. Rows changed during the scan are
// seen or not depending on whether the scan passed their key. Its position is the
// last key it emitted.
type reader struct {
	table  string
	path   string
	schema string
	dec    format.Decoder
	batch  int
	after  []byte // the last key emitted; nil before the first
	chunk  [][2][]byte
	ended  bool
}

var (
	_ exec.Reader      = (*reader)(nil)
	_ exec.Snapshotter = (*reader)(nil)
	_ exec.Restorer    = (*reader)(nil)
)

// chunkRows is how many rows a scan reads in one read transaction.
const chunkRows = 64 << 10

func openSource(_ context.Context, spec connector.SourceSpec) (exec.Reader, error) {
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
	return &reader{table: t.Name, path: path, schema: schemaText(t), dec: dec, batch: spec.BatchSize}, nil
}

// Next returns the next batch of rows in key order, and io.EOF after the last.
func (r *reader) Next(ctx context.Context) (exec.Batch, error) {
	for r.dec.Rows() < r.batch {
		if len(r.chunk) == 0 {
			if r.ended {
				break
			}
			if err := r.readChunk(); err != nil {
				return exec.Batch{}, err
			}
			continue
		}
		kv := r.chunk[0]
		r.chunk = r.chunk[1:]
		if err := r.dec.Decode(kv[1], 0); err != nil {
			return exec.Batch{}, fmt.Errorf("table %s: row %s of %s: %w", r.table, kv[0], r.path, err)
		}
		r.after = kv[0]
	}
	if rec := r.dec.Flush(); rec != nil {
		return exec.Batch{Rec: rec}, nil
	}
	return exec.Batch{}, io.EOF
}

// readChunk reads the rows after the last key emitted, copying them out of the
// transaction.
func (r *reader) readChunk() error {
	db, err := open(r.path, true)
	if errors.Is(err, fs.ErrNotExist) {
		r.ended = true // nothing was ever written: the table is empty
		return nil
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", r.table, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if err := checkSchema(tx, r.path, r.schema); err != nil {
			return err
		}
		rows := tx.Bucket(rowsBucket)
		if rows == nil {
			return nil
		}
		c := rows.Cursor()
		k, v := c.First()
		if r.after != nil {
			if k, v = c.Seek(r.after); k != nil && bytes.Equal(k, r.after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(r.chunk) < chunkRows; k, v = c.Next() {
			r.chunk = append(r.chunk, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("table %s: %w", r.table, err)
	}
	r.ended = len(r.chunk) < chunkRows
	return nil
}

// position is a reader's snapshot.
type position struct {
	Table string `json:"table"`
	After []byte `json:"after"`
}

// Snapshot returns the last key emitted.
func (r *reader) Snapshot(context.Context, int64) ([]byte, error) {
	return json.Marshal(position{Table: r.table, After: r.after})
}

// Restore continues the scan after the key of the snapshot.
func (r *reader) Restore(state []byte) error {
	var p position
	if err := json.Unmarshal(state, &p); err != nil || p.Table != r.table {
		return fmt.Errorf("table %s: cannot restore the embedded source from this state", r.table)
	}
	r.after, r.chunk, r.ended = p.After, nil, false
	return nil
}

func (r *reader) Close() error {
	r.dec.Release()
	return nil
}
