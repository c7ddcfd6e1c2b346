package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
	bolt "go.etcd.io/bbolt"
)

// Source and Sink are the connector 'embedded'.
var (
	Source = connector.SourceConnector{Open: openSource, Replayable: true, Bounded: func(*planner.Table) bool { return true }}
	Sink   = connector.SinkConnector{Open: openSink, Delivery: func(*planner.Table) connector.Delivery { return connector.Upserts }}
)

// The file holds two buckets: rows, by encoded primary key, and meta, whose key
// "schema" says what the rows are, so that a reader declaring other columns is told.
var (
	rowsBucket = []byte("rows")
	metaBucket = []byte("meta")
	schemaKey  = []byte("schema")
)

// lockTimeout bounds the wait for another process (or task) that has the file open:
// writers and readers hold it only for one flush or one chunk of a scan.
const lockTimeout = 30 * time.Second

// pathOf is the table's file: its 'path' option, or <tables dir>/<name>.db.
func pathOf(o *connector.Options, t *planner.Table, tablesDir string) (string, error) {
	if p, ok := t.Option("path"); ok && strings.TrimSpace(p) != "" {
		return p, nil
	}
	if tablesDir == "" {
		return "", o.Err("option 'path' is required")
	}
	name, err := connector.FileName(t)
	if err != nil {
		return "", err
	}
	return filepath.Join(tablesDir, name+".db"), nil
}

// schemaText describes a table's physical columns and key, as stored in the file.
func schemaText(t *planner.Table) string {
	var b strings.Builder
	for i, c := range t.PhysicalSchema() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.Name, c.Type)
	}
	fmt.Fprintf(&b, ", PRIMARY KEY (%s)", strings.Join(t.PrimaryKey, ", "))
	return b.String()
}

// open opens the table's file, waiting for other holders of its lock.
func open(path string, readOnly bool) (*bolt.DB, error) {
	if readOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout, ReadOnly: readOnly})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s is locked by another process for more than %v", path, lockTimeout)
	}
	return db, err
}

// checkSchema compares the stored description of the rows with want; an empty file
// has none yet.
func checkSchema(tx *bolt.Tx, path, want string) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		return nil
	}
	if got := meta.Get(schemaKey); got != nil && !bytes.Equal(got, []byte(want)) {
		return fmt.Errorf("the embedded table at %s holds (%s), not (%s)", path, got, want)
	}
	return nil
}
