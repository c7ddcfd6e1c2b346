package format

import (
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// The metadata of the changelog formats (planner.FormatMetadata lists them with their
// types) is read from the fields of each message beside its rows, as Flink reads them:
//
//	debezium-json  schema (the "schema" object's JSON text; with schema-include),
//	               ingestion-timestamp (ts_ms), source.timestamp (source.ts_ms),
//	               source.database (source.db), source.schema, source.table
//	               (source.table or source.collection), source.properties (source)
//	canal-json     database, table, sql-type (sqlType), pk-names (pkNames),
//	               ingestion-timestamp (ts), event-timestamp (es)
//	maxwell-json   database, table, primary-key-columns (primary_key_columns),
//	               ingestion-timestamp (ts, in seconds)
//
// Every row of a message has its message's metadata. An absent or null field is NULL;
// a field of the wrong type makes the message malformed.

// metaColumn is a metadata column a CDCDecoder fills: its key, builder, and the value
// of the message being decoded.
type metaColumn struct {
	key  string
	read func(d *CDCDecoder, v *metaValue) string
	b    array.Builder
	v    metaValue
}

// metaValue is one message's value of a metadata key.
type metaValue struct {
	null  bool
	s     string   // STRING
	ts    int64    // TIMESTAMP_LTZ(3), in milliseconds
	keys  []string // MAP: its keys; ARRAY: unused
	strs  []string // MAP<STRING, STRING> items or ARRAY<STRING> elements
	ints  []int64  // MAP<STRING, INT> items
	valid []bool   // of strs or ints
}

// NewMetadataDecoder returns a decoder of a changelog format that also reads the
// format's metadata keys meta (as planner.FormatMetadata names them, without a
// connector's prefix): Flush's records hold schema's columns followed by one column a
// key, of the key's type.
func NewMetadataDecoder(format string, schema planner.Schema, meta []string, mem memory.Allocator, opts map[string]string, loc *time.Location) (Decoder, error) {
	if !IsChangelog(format) {
		return nil, fmt.Errorf("format %s has no metadata", format)
	}
	o, err := ParseChangelogOptions(format, opts)
	if err != nil {
		return nil, err
	}
	o.JSON.Location = loc
	d, err := NewCDCDecoder(schema, mem, o)
	if err != nil {
		return nil, err
	}
	keys := planner.FormatMetadata(format)
	for _, name := range meta {
		i := -1
		for j, k := range keys {
			if k.Key == name {
				i = j
			}
		}
		read := metaReaders[format][name]
		if i < 0 || read == nil {
			d.Release()
			return nil, fmt.Errorf("format %s has no metadata key '%s'", format, name)
		}
		d.meta = append(d.meta, metaColumn{key: name, read: read, b: array.NewBuilder(mem, exec.ArrowType(keys[i].Type))})
		d.metaFields = append(d.metaFields, arrow.Field{Name: name, Type: exec.ArrowType(keys[i].Type), Nullable: true})
	}
	return d, nil
}

// metaReaders read each format's metadata keys from a message's envelope fields
// (d.fields, by the format's field list; debezium-json's top-level "schema" in
// d.schema), returning why the message is malformed.
var metaReaders = map[string]map[string]func(d *CDCDecoder, v *metaValue) string{
	Debezium: {
		"schema": func(d *CDCDecoder, v *metaValue) string {
			if d.schema != nil {
				*v = metaValue{s: string(d.schema)}
			}
			return ""
		},
		"ingestion-timestamp": func(d *CDCDecoder, v *metaValue) string { return v.millis(d.fields[4], 1, "ts_ms") },
		"source.timestamp":    func(d *CDCDecoder, v *metaValue) string { return v.millis(d.sourceField("ts_ms"), 1, "source.ts_ms") },
		"source.database":     func(d *CDCDecoder, v *metaValue) string { v.text(d.sourceField("db")); return "" },
		"source.schema":       func(d *CDCDecoder, v *metaValue) string { v.text(d.sourceField("schema")); return "" },
		"source.table": func(d *CDCDecoder, v *metaValue) string {
			if t := d.sourceField("table"); t != nil {
				v.text(t)
			} else {
				v.text(d.sourceField("collection"))
			}
			return ""
		},
		"source.properties": func(d *CDCDecoder, v *metaValue) string { return v.stringMap(d.fields[5], "source") },
	},
	Canal: {
		"database":            func(d *CDCDecoder, v *metaValue) string { v.text(d.fields[3]); return "" },
		"table":               func(d *CDCDecoder, v *metaValue) string { v.text(d.fields[4]); return "" },
		"sql-type":            func(d *CDCDecoder, v *metaValue) string { return v.intMap(d.fields[6], "sqlType") },
		"pk-names":            func(d *CDCDecoder, v *metaValue) string { return v.stringArray(d.fields[7], "pkNames") },
		"ingestion-timestamp": func(d *CDCDecoder, v *metaValue) string { return v.millis(d.fields[8], 1, "ts") },
		"event-timestamp":     func(d *CDCDecoder, v *metaValue) string { return v.millis(d.fields[9], 1, "es") },
	},
	Maxwell: {
		"database":            func(d *CDCDecoder, v *metaValue) string { v.text(d.fields[3]); return "" },
		"table":               func(d *CDCDecoder, v *metaValue) string { v.text(d.fields[4]); return "" },
		"primary-key-columns": func(d *CDCDecoder, v *metaValue) string { return v.stringArray(d.fields[5], "primary_key_columns") },
		// Maxwell's ts is in seconds.
		"ingestion-timestamp": func(d *CDCDecoder, v *metaValue) string { return v.millis(d.fields[6], 1000, "ts") },
	},
}

// readMeta reads the metadata of the message whose envelope is in d.fields, or
// returns why the message is malformed.
func (d *CDCDecoder) readMeta() string {
	for i := range d.meta {
		c := &d.meta[i]
		c.v = metaValue{null: true}
		if msg := c.read(d, &c.v); msg != "" {
			return "metadata '" + c.key + "': " + msg
		}
	}
	return ""
}

// sourceField returns the field name of debezium's "source" object (nil when absent,
// null, or source is no object).
func (d *CDCDecoder) sourceField(name string) []byte {
	var out []byte
	eachField(d.fields[5], func(k, v []byte) bool {
		if string(k) == name {
			out = v
			if hasLiteral(v, 0, "null") {
				out = nil
			}
			return false
		}
		return true
	})
	return out
}

// eachField calls f with the key and the raw value of each field of the JSON object
// v, until f returns false; it returns false when v is no well-formed object.
func eachField(v []byte, f func(key, val []byte) bool) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	var buf []byte
	p := skipWS(v, 1)
	if p < len(v) && v[p] == '}' {
		return true
	}
	for {
		p = skipWS(v, p)
		if p >= len(v) || v[p] != '"' {
			return false
		}
		buf = buf[:0]
		key, np, msg := scanString(v, p, &buf)
		if msg != "" {
			return false
		}
		p = skipWS(v, np)
		if p >= len(v) || v[p] != ':' {
			return false
		}
		p = skipWS(v, p+1)
		start := p
		if p, msg = skipValue(v, p, 0); msg != "" {
			return false
		}
		if !f(key, v[start:p]) {
			return true
		}
		p = skipWS(v, p)
		if p < len(v) && v[p] == ',' {
			p++
			continue
		}
		return p < len(v) && v[p] == '}'
	}
}

// eachElem calls f with each raw element of the JSON array v; it returns false when v
// is no well-formed array.
func eachElem(v []byte, f func(val []byte)) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	p := skipWS(v, 1)
	if p < len(v) && v[p] == ']' {
		return true
	}
	for {
		p = skipWS(v, p)
		start := p
		var msg string
		if p, msg = skipValue(v, p, 0); msg != "" {
			return false
		}
		f(v[start:p])
		p = skipWS(v, p)
		if p < len(v) && v[p] == ',' {
			p++
			continue
		}
		return p < len(v) && v[p] == ']'
	}
}

// scalarText is the text of a JSON value read as a STRING, as Flink reads one: a
// string unescaped, another value as its JSON text; ok is false for null.
func scalarText(v []byte) (string, bool) {
	if v == nil || hasLiteral(v, 0, "null") {
		return "", false
	}
	if v[0] == '"' {
		var buf []byte
		if s, _, msg := scanString(v, 0, &buf); msg == "" {
			return string(s), true
		}
	}
	return string(v), true
}

// text sets the value to the JSON value v read as a STRING (nil: NULL).
func (m *metaValue) text(v []byte) {
	s, ok := scalarText(v)
	*m = metaValue{null: !ok, s: s}
}

// millis sets the value to the timestamp of the JSON number v (or a string holding
// one) in units of scale milliseconds.
func (m *metaValue) millis(v []byte, scale int64, field string) string {
	s, ok := scalarText(v)
	if !ok {
		return ""
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > (1<<62)/scale || n < -(1<<62)/scale {
		return fmt.Sprintf("field %s: cannot parse %s as BIGINT", field, quoteClipped(s))
	}
	*m = metaValue{ts: n * scale}
	return ""
}

// stringMap sets the value to the JSON object v as a MAP<STRING, STRING>.
func (m *metaValue) stringMap(v []byte, field string) string {
	if v == nil {
		return ""
	}
	*m = metaValue{}
	if !eachField(v, func(k, val []byte) bool {
		s, ok := scalarText(val)
		m.keys, m.strs, m.valid = append(m.keys, string(k)), append(m.strs, s), append(m.valid, ok)
		return true
	}) {
		*m = metaValue{null: true}
		return "field " + field + ": expected a JSON object"
	}
	return ""
}

// intMap sets the value to the JSON object v of integers as a MAP<STRING, INT>.
func (m *metaValue) intMap(v []byte, field string) string {
	if v == nil {
		return ""
	}
	*m = metaValue{}
	msg := ""
	if !eachField(v, func(k, val []byte) bool {
		s, ok := scalarText(val)
		var n int64
		if ok {
			var err error
			if n, err = strconv.ParseInt(s, 10, 32); err != nil {
				msg = fmt.Sprintf("field %s.%s: cannot parse %s as INT", field, k, quoteClipped(s))
				return false
			}
		}
		m.keys, m.ints, m.valid = append(m.keys, string(k)), append(m.ints, n), append(m.valid, ok)
		return true
	}) {
		msg = "field " + field + ": expected a JSON object"
	}
	if msg != "" {
		*m = metaValue{null: true}
	}
	return msg
}

// stringArray sets the value to the JSON array v as an ARRAY<STRING>.
func (m *metaValue) stringArray(v []byte, field string) string {
	if v == nil {
		return ""
	}
	*m = metaValue{}
	if !eachElem(v, func(val []byte) {
		s, ok := scalarText(val)
		m.strs, m.valid = append(m.strs, s), append(m.valid, ok)
	}) {
		*m = metaValue{null: true}
		return "field " + field + ": expected a JSON array"
	}
	return ""
}

// appendMeta appends the message's metadata for one more row.
func (d *CDCDecoder) appendMeta() {
	for i := range d.meta {
		c := &d.meta[i]
		if c.v.null {
			c.b.AppendNull()
			continue
		}
		switch b := c.b.(type) {
		case *array.StringBuilder:
			b.Append(c.v.s)
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(c.v.ts))
		case *array.MapBuilder:
			b.Append(true)
			keys := b.KeyBuilder().(*array.StringBuilder)
			for j, k := range c.v.keys {
				keys.Append(k)
				switch items := b.ItemBuilder().(type) {
				case *array.StringBuilder:
					items.AppendValues(c.v.strs[j:j+1], c.v.valid[j:j+1])
				case *array.Int32Builder:
					if c.v.valid[j] {
						items.Append(int32(c.v.ints[j]))
					} else {
						items.AppendNull()
					}
				}
			}
		case *array.ListBuilder:
			b.Append(true)
			b.ValueBuilder().(*array.StringBuilder).AppendValues(c.v.strs, c.v.valid)
		}
	}
}

// addRow appends a parsed row of kind, with the message's metadata.
func (d *CDCDecoder) addRow(cells []cell, kind exec.RowKind) {
	d.appendRow(cells, kind)
	if d.meta != nil {
		d.appendMeta()
	}
}

// Flush returns the rows decoded since the last Flush, with the metadata columns
// after the table's; see Decoder.
func (d *CDCDecoder) Flush() arrow.Record {
	rec := d.JSONDecoder.Flush()
	if rec == nil || d.meta == nil {
		return rec
	}
	defer rec.Release()
	fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...), d.metaFields...)
	cols := append([]arrow.Array(nil), rec.Columns()...)
	for i := range d.meta {
		a := d.meta[i].b.NewArray()
		defer a.Release()
		cols = append(cols, a)
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// Release frees the builders; see Decoder.
func (d *CDCDecoder) Release() {
	d.JSONDecoder.Release()
	for _, c := range d.meta {
		c.b.Release()
	}
	d.meta = nil
}
