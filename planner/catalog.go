package planner

import (
	"sort"
	"strings"
)

// Table is a table registered with CREATE TABLE: its columns, event-time attribute,
// key and connector options.
type Table struct {
	Name       string
	Columns    []TableColumn
	Watermark  *Watermark // nil when the table declares none
	PrimaryKey []string
	// PartitionKeys are the columns of PARTITIONED BY, as the table names them; nil
	// when the table is not partitioned.
	PartitionKeys []string
	Options       map[string]string // WITH options, keys as written
	Temporary     bool
	// Hinted lists the options a reference's OPTIONS hint set (see tableHints), sorted;
	// nil for the catalog's own table.
	Hinted []string
}

// TableColumn is a physical column, a computed one when Computed is set, or a metadata
// column when Metadata is set.
type TableColumn struct {
	Name        string
	Type        Type
	Computed    Expr   // over the columns a source produces, in SourceSchema order
	ComputedSQL string // as written, for DESCRIBE
	// Metadata is the key a metadata column reads (its FROM key, or its name); Virtual
	// says the sink does not write it.
	Metadata string
	Virtual  bool
}

// IsMetadata reports whether c is a metadata column.
func (c TableColumn) IsMetadata() bool { return c.Metadata != "" }

// Watermark is a table's WATERMARK FOR Column AS Expr.
type Watermark struct {
	Column string
	Expr   Expr // over the table's full schema
	SQL    string
}

// Schema returns every column of the table, computed ones included.
func (t *Table) Schema() Schema {
	s := make(Schema, len(t.Columns))
	for i, c := range t.Columns {
		s[i] = Column{Name: c.Name, Type: c.Type}
	}
	return s
}

// PhysicalSchema returns the physical columns: those a format reads and writes.
func (t *Table) PhysicalSchema() Schema {
	var s Schema
	for _, c := range t.Columns {
		if c.Computed == nil && !c.IsMetadata() {
			s = append(s, Column{Name: c.Name, Type: c.Type})
		}
	}
	return s
}

// SourceSchema returns the columns a source produces: the physical and metadata
// columns, in the table's order. A metadata column has its key's type (see
// MetadataOf); the scan casts it to the declared one.
func (t *Table) SourceSchema() Schema {
	var s Schema
	for _, c := range t.Columns {
		switch {
		case c.Computed != nil:
		case c.IsMetadata():
			typ := c.Type
			if k, ok := t.MetadataOf(c); ok {
				typ = k.Type
			}
			s = append(s, Column{Name: c.Name, Type: typ})
		default:
			s = append(s, Column{Name: c.Name, Type: c.Type})
		}
	}
	return s
}

// PersistedSchema returns the columns an INSERT writes: the physical and the
// non-virtual metadata columns, in the table's order, all with their declared types.
func (t *Table) PersistedSchema() Schema {
	var s Schema
	for _, c := range t.Columns {
		if c.Computed == nil && !c.Virtual {
			s = append(s, Column{Name: c.Name, Type: c.Type})
		}
	}
	return s
}

// HasMetadata reports whether the table declares metadata columns.
func (t *Table) HasMetadata() bool {
	for _, c := range t.Columns {
		if c.IsMetadata() {
			return true
		}
	}
	return false
}

// Option returns the WITH option key (case-sensitive, as Flink's are).
func (t *Table) Option(key string) (string, bool) {
	v, ok := t.Options[key]
	return v, ok
}

// Connector returns the 'connector' option, lower case.
func (t *Table) Connector() string { return strings.ToLower(t.Options["connector"]) }

// Changelog reports whether the table's source reads a changelog (+I, -U, +U, -D), not
// only inserts: its format is one of the change-data-capture formats (debezium-json,
// canal-json, maxwell-json), or its connector is upsert-kafka. A sink of such a table
// takes updates and deletes.
func (t *Table) Changelog() bool {
	if t.Connector() == "upsert-kafka" {
		return true
	}
	f := t.Options["format"]
	if f == "" {
		f = t.Options["value.format"]
	}
	switch strings.ToLower(f) {
	case "debezium-json", "canal-json", "maxwell-json":
		return true
	}
	return false
}

// OptionKeys returns the option keys, sorted.
func (t *Table) OptionKeys() []string {
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
