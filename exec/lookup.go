package exec

import (
	"context"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
)

// Lookuper reads the rows of a table by key, for a lookup join (the table's connector
// opens it).
type Lookuper interface {
	// Lookup returns, as one record of the table's physical columns that the caller
	// releases, at least the rows whose key columns equal a row of keys. keys has the
	// key columns' types, and its rows are distinct and hold no NULL. Other rows may
	// come too (a table read whole), and are ignored.
	Lookup(ctx context.Context, keys arrow.Record) (arrow.Record, error)
	Close() error
}

// WholeLookuper is a Lookuper that reads its whole table, whatever the keys (a file):
// a lookup join keeps it all, by key, and reads it again once Reload has passed.
type WholeLookuper interface {
	Lookuper
	Reload() time.Duration
}
