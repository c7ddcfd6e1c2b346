package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/connector"
	"github.com/streamsql/streamsql/planner"
)

// Lookup is a PostgreSQL table as a lookup join's table (connectors 'postgres' and
// 'jdbc'): one query per batch of keys, `WHERE k = ANY($1)` (or `(k1, k2) IN (SELECT *
// FROM unnest($1, $2))`), on a connection of the task's own, opened again after a
// failure.
var Lookup = connector.LookupConnector{Open: openLookup}

type lookup struct {
	name   string
	cfg    *config
	conn   *pgx.Conn
	query  string
	keys   []kind
	types  []planner.Type // the table's columns
	mem    memory.Allocator
	schema *arrow.Schema
	loc    *time.Location
}

var _ exec.Lookuper = (*lookup)(nil)

func openLookup(ctx context.Context, spec connector.LookupSpec) (exec.Lookuper, error) {
	t := spec.Table
	cfg, err := parseOptions(t)
	if err != nil {
		return nil, err
	}
	phys := t.PhysicalSchema()
	l := &lookup{name: t.Name, cfg: cfg, mem: spec.Mem, schema: exec.ArrowSchema(phys), loc: spec.Location}
	var selects []string
	for _, c := range phys {
		k, err := kindOf(c.Type)
		if err != nil || k == kMillis || k == kMonths || k == kNull {
			return nil, connector.TableError(t, connector.ErrInvalidOption, "column %s: a lookup join cannot read %s from PostgreSQL", c.Name, c.Type)
		}
		cast := pgTypes[k]
		if k == kDecimal {
			cast = "text" // read exactly, at the column's scale
		}
		selects = append(selects, fmt.Sprintf("%s::%s", quoteIdent(c.Name), cast))
		l.types = append(l.types, c.Type)
	}
	var names, params []string
	for i, k := range spec.Keys {
		kk, _ := kindOf(phys[k].Type)
		l.keys = append(l.keys, kk)
		names = append(names, quoteIdent(phys[k].Name))
		params = append(params, fmt.Sprintf("$%d::%s[]", i+1, pgTypes[kk]))
	}
	where := fmt.Sprintf("%s = ANY(%s)", names[0], params[0])
	if len(names) > 1 {
		where = fmt.Sprintf("(%s) IN (SELECT * FROM unnest(%s))", strings.Join(names, ", "), strings.Join(params, ", "))
	}
	l.query = fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(selects, ", "), cfg.table, where)
	if err := l.connect(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// connect opens the connection, bounded by 'connection.max-retry-timeout'.
func (l *lookup) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg.conn)
	if err != nil {
		return fmt.Errorf("table %s: cannot connect to PostgreSQL at %s:%d: %s", l.name, l.cfg.conn.Host, l.cfg.conn.Port, oneLine(err))
	}
	l.conn = conn
	return nil
}

// Lookup runs the query for keys. After a failure the connection is closed, and the
// next call connects again.
func (l *lookup) Lookup(ctx context.Context, keys arrow.Record) (arrow.Record, error) {
	if l.conn == nil {
		if err := l.connect(ctx); err != nil {
			return nil, err
		}
	}
	n := int(keys.NumRows())
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	args := make([]any, len(l.keys))
	for i, k := range l.keys {
		c := &column{name: keys.Schema().Field(i).Name, kind: k}
		c.resize(n)
		if err := c.set(keys.Column(i), rows); err != nil {
			return nil, fmt.Errorf("table %s: %w", l.name, err)
		}
		args[i] = columnArray{c: c, rows: rows}
	}
	rec, err := l.query1(ctx, args)
	if err != nil {
		l.conn.Close(context.Background())
		l.conn = nil
		return nil, fmt.Errorf("table %s: looking up %d keys in %s: %s", l.name, n, l.cfg.tableName, oneLine(err))
	}
	return rec, nil
}

func (l *lookup) query1(ctx context.Context, args []any) (arrow.Record, error) {
	rs, err := l.conn.Query(ctx, l.query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	b := array.NewRecordBuilder(l.mem, l.schema)
	defer b.Release()
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if err := l.appendValue(b.Field(i), l.types[i], v); err != nil {
				return nil, fmt.Errorf("column %s: %w", l.schema.Field(i).Name, err)
			}
		}
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return b.NewRecord(), nil
}

// appendValue appends a value as pgx returns it for the column's cast type.
func (l *lookup) appendValue(fb array.Builder, t planner.Type, v any) error {
	if v == nil {
		fb.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("cannot read %T as %s", v, t) }
	switch b := fb.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int32Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int16Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.Append(int16(x))
	case *array.Int8Builder:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		b.Append(int8(x))
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Float32Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(float32(x))
	case *array.StringBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.BinaryBuilder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.Append([]byte(x))
	case *array.Decimal128Builder:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		d, err := decimal128.FromString(x, int32(t.Precision), int32(t.Scale))
		if err != nil {
			return err
		}
		b.Append(d)
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		if t.Kind == planner.Timestamp { // a wall clock, which pgx gives in UTC
			x = time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC)
		}
		b.Append(arrow.Timestamp(x.UnixMilli()))
	case *array.Date32Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32FromTime(x))
	default:
		return bad()
	}
	return nil
}

func (l *lookup) Close() error {
	if l.conn != nil {
		return l.conn.Close(context.Background())
	}
	return nil
}
