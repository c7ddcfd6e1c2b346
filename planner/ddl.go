package planner

import (
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// BindType resolves a written type.
func BindType(t *parser.TypeName) (Type, error) {
	param := func(i, def int) int {
		if i < len(t.Params) {
			return t.Params[i]
		}
		return def
	}
	var out Type
	switch t.Name {
	case "BOOLEAN":
		out = TypeBoolean
	case "TINYINT":
		out = Type{Kind: TinyInt}
	case "SMALLINT":
		out = Type{Kind: SmallInt}
	case "FLOAT":
		out = Type{Kind: Float}
	case "INT":
		out = TypeInt
	case "BIGINT":
		out = TypeBigInt
	case "DOUBLE":
		out = TypeDouble
	case "DECIMAL":
		p, s := param(0, 10), param(1, 0)
		if p < 1 || p > 38 || s < 0 || s > p {
			return Type{}, errorf(t, "DECIMAL(%d, %d) is out of range: precision must be 1 to 38 and scale 0 to precision", p, s)
		}
		out = DecimalType(p, s)
	case "STRING":
		out = TypeString
	case "VARCHAR":
		n := param(0, 0)
		if n < 0 {
			return Type{}, errorf(t, "VARCHAR length must be positive")
		}
		out = Type{Kind: String, Length: n}
	case "CHAR", "BINARY", "VARBINARY":
		// Flink's default length of CHAR and BINARY is 1; VARBINARY without one is BYTES.
		n := param(0, 1)
		if t.Name == "VARBINARY" {
			n = param(0, 0)
		}
		if n < 1 && (t.Name != "VARBINARY" || len(t.Params) > 0) {
			return Type{}, errorf(t, "%s length must be at least 1", t.Name)
		}
		out = Type{Kind: Binary, Length: n, Fixed: t.Name == "BINARY"}
		if t.Name == "CHAR" {
			out = Type{Kind: String, Length: n, Fixed: true}
		}
	case "BYTES":
		out = Type{Kind: Binary}
	case "ROW":
		fields := make([]Column, len(t.Fields))
		for i, f := range t.Fields {
			for _, g := range t.Fields[:i] {
				if equalFold(g.Name, f.Name) {
					return Type{}, errorf(f, "ROW field `%s` is defined twice", f.Name)
				}
			}
			ft, err := BindType(f.Type)
			if err != nil {
				return Type{}, err
			}
			fields[i] = Column{Name: f.Name, Type: ft}
		}
		out = RowType(fields)
	case "ARRAY", "MAP", "MULTISET":
		elem, err := BindType(t.Elem)
		if err != nil {
			return Type{}, err
		}
		if t.Name == "ARRAY" {
			out = ArrayType(elem)
			break
		}
		if t.Name == "MULTISET" {
			out = MultisetType(elem)
			break
		}
		value, err := BindType(t.Value)
		if err != nil {
			return Type{}, err
		}
		out = MapType(elem, value)
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		p := param(0, 6) // TIMESTAMP is TIMESTAMP(6), as in Flink
		if p < 0 || p > 9 {
			return Type{}, errorf(t, "%s precision must be 0 to 9", t.Name)
		}
		// Values are kept to the millisecond whatever p says (see TimestampDigits).
		out = Type{Kind: Timestamp, Precision: p}
		if t.Name == "TIMESTAMP_LTZ" {
			out.Kind = TimestampLTZ
		}
	case "DATE":
		out = TypeDate
	case "TIME":
		p := param(0, 0)
		if p < 0 || p > 9 {
			return Type{}, errorf(t, "TIME precision must be 0 to 9")
		}
		out = TimeType(p)
	default:
		return Type{}, errorf(t, "unknown type %s", t.Name)
	}
	out.NotNull = t.NotNull
	return out, nil
}

// BindTable resolves CREATE TABLE into a table: types, computed columns, the watermark
// and the primary key.
func BindTable(s *parser.CreateTableStmt) (*Table, error) {
	t := &Table{Name: s.Name, Options: map[string]string{}, Temporary: s.Temporary}
	for _, o := range s.Options {
		switch o.Key {
		case "connector", "format", "value.format":
			t.Options[o.Key] = o.Value // the metadata columns' keys are the connector's and its format's
		}
	}
	seen := map[string]bool{}
	var phys Schema
	for _, c := range s.Columns {
		if seen[strings.ToLower(c.Name)] {
			return nil, errorf(c, "duplicate column `%s`", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if c.Type != nil {
			typ, err := BindType(c.Type)
			if err != nil {
				return nil, err
			}
			col := TableColumn{Name: c.Name, Type: typ}
			if c.Metadata {
				col.Metadata, col.Virtual = c.MetadataKey, c.Virtual
				if col.Metadata == "" {
					col.Metadata = c.Name
				}
				if err := bindMetadata(t, c, col); err != nil {
					return nil, err
				}
				if k, ok := t.MetadataOf(col); ok {
					typ = k.Type // as the source produces it
				}
			}
			phys = append(phys, Column{Name: c.Name, Type: typ})
			t.Columns = append(t.Columns, col)
		}
	}
	// Computed columns see the physical columns.
	b := &exprBinder{sc: newScope(s.Name, phys)}
	var cols []TableColumn
	physIdx := 0
	for _, c := range s.Columns {
		if c.Type != nil {
			cols = append(cols, t.Columns[physIdx])
			physIdx++
			continue
		}
		e, err := b.bind(c.Computed)
		if err != nil {
			return nil, err
		}
		cols = append(cols, TableColumn{Name: c.Name, Type: e.Type(), Computed: e, ComputedSQL: c.Computed.String()})
	}
	t.Columns = cols
	if s.Watermark != nil {
		full := t.Schema()
		i := full.Index(s.Watermark.Column)
		if i < 0 {
			return nil, errorf(s.Watermark, "WATERMARK FOR unknown column `%s`%s", s.Watermark.Column, suggest(s.Watermark.Column, schemaNames(full)))
		}
		if k := full[i].Type.Kind; k != Timestamp && k != TimestampLTZ || full[i].Type.Precision > 3 {
			return nil, errorf(s.Watermark, "WATERMARK FOR column %s needs a TIMESTAMP(p) or TIMESTAMP_LTZ(p) with p from 0 to 3, got %s", full[i].Name, full[i].Type)
		}
		e, err := (&exprBinder{sc: newScope(s.Name, full)}).bind(s.Watermark.Expr)
		if err != nil {
			return nil, err
		}
		if e.Type().Kind != full[i].Type.Kind {
			return nil, errorf(s.Watermark.Expr, "watermark expression must be a %s, got %s", full[i].Type.Nullable(), e.Type().Nullable())
		}
		t.Watermark = &Watermark{Column: full[i].Name, Expr: e, SQL: s.Watermark.Expr.String()}
	}
	for _, k := range s.PrimaryKey {
		i := t.Schema().Index(k)
		if i < 0 {
			return nil, errorf(s, "PRIMARY KEY names unknown column `%s`", k)
		}
		if t.Columns[i].Computed != nil {
			return nil, errorf(s, "PRIMARY KEY column `%s` must be a physical column", k)
		}
		// Flink makes primary key columns NOT NULL.
		t.Columns[i].Type.NotNull = true
		t.PrimaryKey = append(t.PrimaryKey, t.Columns[i].Name)
	}
	for _, k := range s.PartitionedBy {
		i := t.Schema().Index(k)
		if i < 0 {
			return nil, errorf(s, "PARTITIONED BY names unknown column `%s`%s", k, suggest(k, schemaNames(t.Schema())))
		}
		c := t.Columns[i]
		if c.Computed != nil {
			return nil, errorf(s, "PARTITIONED BY column `%s` must be a physical column", k)
		}
		if !partitionable(c.Type) {
			return nil, errorf(s, "PARTITIONED BY column `%s` is a %s; a partition column must be a string, number, boolean, date or timestamp", k, c.Type)
		}
		t.PartitionKeys = append(t.PartitionKeys, c.Name)
	}
	if len(t.PartitionKeys) > 0 && len(t.PartitionKeys) == len(t.PhysicalSchema()) {
		return nil, errorf(s, "table %s is partitioned by all its physical columns; its files would hold no column", s.Name)
	}
	clear(t.Options)
	for _, o := range s.Options {
		if _, dup := t.Options[o.Key]; dup {
			return nil, errorf(o, "option '%s' is given twice", o.Key)
		}
		t.Options[o.Key] = o.Value
	}
	if t.Options["connector"] == "" {
		return nil, errorf(s, "table %s needs a 'connector' option in its WITH clause", s.Name)
	}
	return t, nil
}

// partitionable reports whether a column of type t can be a partition column, whose
// value is written as text in a directory name.
func partitionable(t Type) bool {
	switch t.Kind {
	case Row, Array, Map, Binary, IntervalDayTime, IntervalYearMonth:
		return false
	}
	return true
}

// BindView plans a view's query once to check it and learn its schema.
func (p *Planner) BindView(s *parser.CreateViewStmt) (*View, error) {
	n, err := p.planQuery(s.Query)
	if err != nil {
		return nil, err
	}
	schema := n.Schema()
	if len(s.Columns) > 0 {
		if len(s.Columns) != len(schema) {
			return nil, errorf(s, "view %s names %d columns but its query produces %d", s.Name, len(s.Columns), len(schema))
		}
		renamed := make(Schema, len(schema))
		for i, c := range schema {
			renamed[i] = Column{Name: s.Columns[i], Type: c.Type}
		}
		schema = renamed
	}
	return &View{Name: s.Name, Columns: s.Columns, Query: s.Query, Schema: schema, Temporary: s.Temporary}, nil
}
