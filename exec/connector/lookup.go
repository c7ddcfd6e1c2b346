package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// LookupConnector opens a table for a lookup join: a connector's point reads by key.
type LookupConnector struct {
	Open func(context.Context, LookupSpec) (exec.Lookuper, error)
}

// LookupSpec is what a lookup source needs.
type LookupSpec struct {
	Table     *planner.Table   // the table looked up; rows are its physical columns
	Keys      []int            // the key columns, indexes into Table.PhysicalSchema()
	Mem       memory.Allocator // nil means memory.DefaultAllocator
	Location  *time.Location   // session time zone; nil means UTC
	TablesDir string           // where embedded tables keep their files without 'path'
}

// LookupConfig is a table's lookup options, as Flink names them.
type LookupConfig struct {
	// Partial: 'lookup.cache' = 'PARTIAL', a cache of the keys looked up; else 'NONE'.
	Partial           bool
	MaxRows           int64         // 'lookup.partial-cache.max-rows': keys kept; 0 unbounded
	ExpireAfterWrite  time.Duration // 0: never
	ExpireAfterAccess time.Duration // 0: never
	CacheMissingKey   bool          // keys without rows are cached too (default true)
	MaxRetries        int           // 'lookup.max-retries' (default 3)
}

// ReadLookupConfig reads the lookup options of t.
func ReadLookupConfig(t *planner.Table) (LookupConfig, error) {
	o := &Options{t: t, connector: t.Connector()}
	c := LookupConfig{CacheMissingKey: true, MaxRetries: 3}
	switch v, _ := t.Option(planner.LookupCache); strings.ToUpper(strings.TrimSpace(v)) {
	case "", "NONE":
	case "PARTIAL":
		c.Partial = true
	case "FULL":
		return c, o.Err("option '%s' = 'FULL' is not supported yet ('NONE' or 'PARTIAL')", planner.LookupCache)
	default:
		return c, o.Err("option '%s' must be 'NONE' or 'PARTIAL', got %q", planner.LookupCache, v)
	}
	var err error
	if c.MaxRows, err = o.Int64(planner.LookupMaxRows, 0, 1, 1<<40); err != nil {
		return c, err
	}
	if c.ExpireAfterWrite, err = o.Duration(planner.LookupExpireAfterWrite, 0); err != nil {
		return c, err
	}
	if c.ExpireAfterAccess, err = o.Duration(planner.LookupExpireAfterAccess, 0); err != nil {
		return c, err
	}
	if c.CacheMissingKey, err = o.Bool(planner.LookupCacheMissingKey, true); err != nil {
		return c, err
	}
	retries, err := o.Int64(planner.LookupMaxRetries, 3, 0, 1000)
	if err != nil {
		return c, err
	}
	c.MaxRetries = int(retries)
	if c.Partial && c.MaxRows == 0 && c.ExpireAfterWrite == 0 && c.ExpireAfterAccess == 0 {
		return c, o.Err("'%s' = 'PARTIAL' needs '%s', '%s' or '%s', as in Flink", planner.LookupCache,
			planner.LookupMaxRows, planner.LookupExpireAfterWrite, planner.LookupExpireAfterAccess)
	}
	return c, nil
}

// CanLookup says whether a lookup join can read t: the filesystem connector, and those
// of the registry's Lookups.
func (r *Registry) CanLookup(t *planner.Table) bool {
	if t.Connector() == "filesystem" {
		return true
	}
	if r == nil {
		return false
	}
	_, ok := r.Lookups[t.Connector()]
	return ok
}

// OpenLookup opens spec.Table for a lookup join.
func (r *Registry) OpenLookup(ctx context.Context, spec LookupSpec) (exec.Lookuper, error) {
	if spec.Mem == nil {
		spec.Mem = memory.DefaultAllocator
	}
	if spec.Location == nil {
		spec.Location = time.UTC
	}
	t := spec.Table
	if t.Connector() == "filesystem" {
		return openFileLookup(spec)
	}
	if r != nil {
		if c, ok := r.Lookups[t.Connector()]; ok {
			return c.Open(ctx, spec)
		}
	}
	return nil, TableError(t, ErrUnknownConnector, "connector '%s' cannot be looked up", t.Connector())
}

// fileLookup reads a filesystem table whole, as Flink's filesystem lookup does: the
// lookup join keeps its rows by key and reads the files again every
// 'lookup.join.cache.ttl' (default 60 minutes).
type fileLookup struct {
	spec   SourceSpec
	reload time.Duration
}

var _ exec.WholeLookuper = (*fileLookup)(nil)

func openFileLookup(spec LookupSpec) (*fileLookup, error) {
	t := *spec.Table
	o := &Options{t: &t, connector: t.Connector()}
	reload, err := o.Duration(planner.LookupReloadTTL, time.Hour)
	if err != nil {
		return nil, err
	}
	if _, ok := t.Option(planner.LookupReloadTTL); !ok {
		if reload, err = o.Duration(planner.LookupReloadTTLShortName, time.Hour); err != nil {
			return nil, err
		}
	}
	// Read once to its end, whatever the table's monitoring says.
	t.Options = map[string]string{}
	for k, v := range spec.Table.Options {
		if !strings.EqualFold(k, "source.monitor-interval") {
			t.Options[k] = v
		}
	}
	f := &fileLookup{spec: SourceSpec{Table: &t, Mem: spec.Mem, Location: spec.Location, BatchSize: DefaultBatchSize, Now: time.Now}, reload: reload}
	r, err := openFileSource(f.spec) // check the options and the path now
	if err != nil {
		return nil, err
	}
	r.Close()
	return f, nil
}

func (f *fileLookup) Reload() time.Duration { return f.reload }

// Lookup reads every file of the table, whatever the keys.
func (f *fileLookup) Lookup(ctx context.Context, _ arrow.Record) (arrow.Record, error) {
	r, err := openFileSource(f.spec)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []arrow.Record
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for {
		b, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if b.Rec != nil {
			recs = append(recs, b.Rec)
		}
	}
	return concatRecords(f.spec.Mem, exec.ArrowSchema(f.spec.Table.PhysicalSchema()), recs)
}

func (f *fileLookup) Close() error { return nil }

// concatRecords joins records of one schema into one.
func concatRecords(mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	rows := int64(0)
	for _, rec := range recs {
		rows += rec.NumRows()
	}
	for i := range cols {
		if len(recs) == 0 {
			cols[i] = array.MakeArrayOfNull(mem, schema.Field(i).Type, 0)
			continue
		}
		parts := make([]arrow.Array, len(recs))
		for j, rec := range recs {
			parts[j] = rec.Column(i)
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("reading the lookup table: %w", err)
		}
		cols[i] = c
	}
	return array.NewRecord(schema, cols, rows), nil
}
