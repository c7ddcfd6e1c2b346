package format

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
)

// The changelog formats: JSON messages of change-data-capture tools, each an insert, an
// update or a delete of a database row, read as +I, -U/+U and -D rows.
const (
	Debezium = "debezium-json"
	Canal    = "canal-json"
	Maxwell  = "maxwell-json"
)

// IsChangelog reports whether a format's records are changes (+I, -U, +U, -D) rather
// than inserts: a source in it is updating, and a sink in it takes updates and deletes.
func IsChangelog(format string) bool {
	switch strings.ToLower(format) {
	case Debezium, Canal, Maxwell:
		return true
	}
	return false
}

// ChangelogOptions are the options of a changelog format (WITH keys prefixed with the
// format's name: debezium-json.ignore-parse-errors, ...).
type ChangelogOptions struct {
	Format string
	// JSON are the options of the rows inside the messages: IgnoreParseErrors and
	// TimestampISO8601 come from <format>.ignore-parse-errors and
	// <format>.timestamp-format.standard.
	JSON JSONOptions
	// SchemaInclude is debezium-json.schema-include: every message is
	// {"schema": ..., "payload": {"before": ..., "after": ..., "op": ...}}, as Kafka
	// Connect writes with value.converter.schemas.enable.
	SchemaInclude bool
	// DatabaseInclude and TableInclude are canal-json.database.include and
	// canal-json.table.include: only messages of matching databases and tables are read.
	DatabaseInclude, TableInclude *regexp.Regexp
}

func changelogOptionKeys(format string) []string {
	keys := []string{format + ".ignore-parse-errors", format + ".timestamp-format.standard"}
	switch format {
	case Debezium:
		keys = append(keys, Debezium+".schema-include")
	case Canal:
		keys = append(keys, Canal+".database.include", Canal+".table.include")
	}
	return keys
}

// ParseChangelogOptions reads the <format>.* keys of opts (other keys are ignored).
func ParseChangelogOptions(format string, opts map[string]string) (ChangelogOptions, error) {
	o := ChangelogOptions{Format: format}
	var err error
	if v, ok := opts[format+".ignore-parse-errors"]; ok {
		if o.JSON.IgnoreParseErrors, err = optionBool(format+".ignore-parse-errors", v); err != nil {
			return o, err
		}
	}
	if v, ok := opts[format+".timestamp-format.standard"]; ok {
		switch strings.ToUpper(v) {
		case "SQL":
		case "ISO-8601":
			o.JSON.TimestampISO8601 = true
		default:
			return o, fmt.Errorf("option '%s.timestamp-format.standard' must be 'SQL' or 'ISO-8601', got %q", format, v)
		}
	}
	if v, ok := opts[Debezium+".schema-include"]; ok && format == Debezium {
		if o.SchemaInclude, err = optionBool(Debezium+".schema-include", v); err != nil {
			return o, err
		}
	}
	if format == Canal {
		for _, inc := range []struct {
			key string
			re  **regexp.Regexp
		}{{Canal + ".database.include", &o.DatabaseInclude}, {Canal + ".table.include", &o.TableInclude}} {
			v, ok := opts[inc.key]
			if !ok {
				continue
			}
			// Java's matches(): the whole name must match.
			if *inc.re, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
				return o, fmt.Errorf("option '%s' is not a regular expression: %v", inc.key, err)
			}
		}
	}
	return o, nil
}

// CDCDecoder decodes the messages of Debezium, Canal and Maxwell, one JSON object a
// line, into rows with their kinds (see Decoder.Kinds); the rows' fields are read as the
// json format reads an object (JSONDecoder).
//
//   - debezium-json: {"before": row, "after": row, "op": "c"|"r"|"u"|"d", ...}: c and r
//     (a snapshot read) are +I of after, u is -U of before and +U of after, d is -D of
//     before; with debezium-json.schema-include these fields are inside "payload".
//   - canal-json: {"data": [row, ...], "old": [row, ...], "type": "INSERT"|"UPDATE"|
//     "DELETE", "database": ..., "table": ..., ...}: each row of data is a +I, a -D, or
//     for UPDATE a -U of the same row of old (which holds only the fields that changed;
//     the others are data's) and a +U of data's. DDL messages ("isDdl": true, or type
//     CREATE) are skipped.
//   - maxwell-json: {"data": row, "old": row, "type": "insert"|"update"|"delete", ...},
//     old as canal's.
//
// Other fields are ignored. A message that is not such a change (another op or type, an
// update without its before row) is malformed, under the table's error policy
// (<format>.ignore-parse-errors); a message's rows are added all or none.
type CDCDecoder struct {
	*JSONDecoder
	opts ChangelogOptions

	// The second set of cells and string buffers: an update parses its before and
	// after rows into one set each (swapped with the JSONDecoder's).
	otherCells []cell
	otherBufs  [][]byte
	fields     [10][]byte // the envelope's values, by the format's field list
	schema     []byte     // debezium-json: the message's top-level "schema", nil for none
	keyBuf     []byte
	rows       [][]byte // canal's data and old rows
	olds       [][]byte

	meta       []metaColumn  // the format's metadata columns read (NewMetadataDecoder)
	metaFields []arrow.Field // their fields in Flush's records
}

var _ Decoder = (*CDCDecoder)(nil)

// NewCDCDecoder returns a decoder of opts.Format for schema.
func NewCDCDecoder(schema planner.Schema, mem memory.Allocator, opts ChangelogOptions) (*CDCDecoder, error) {
	j, err := NewJSONDecoder(schema, mem, opts.JSON)
	if err != nil {
		return nil, err
	}
	j.format = opts.Format
	return &CDCDecoder{
		JSONDecoder: j,
		opts:        opts,
		otherCells:  make([]cell, len(schema)),
		otherBufs:   make([][]byte, len(schema)),
	}, nil
}

// The envelope fields of each format.
var (
	debeziumFields = []string{"before", "after", "op", "payload", "ts_ms", "source", "schema"}
	canalFields    = []string{"data", "old", "type", "database", "table", "isDdl", "sqlType", "pkNames", "ts", "es"}
	maxwellFields  = []string{"data", "old", "type", "database", "table", "primary_key_columns", "ts"}
)

// Decode decodes one message; see Decoder.
func (d *CDCDecoder) Decode(line []byte, lineNo int64) error {
	body := trimSpace(line)
	if len(body) == 0 {
		return nil
	}
	var part string
	col, msg := -1, ""
	switch d.opts.Format {
	case Debezium:
		part, col, msg = d.debezium(body)
	case Canal:
		part, col, msg = d.canal(body)
	case Maxwell:
		part, col, msg = d.maxwell(body)
	}
	if msg == "" {
		return nil
	}
	if d.ignore {
		d.skipped++
		return nil
	}
	e := &ParseError{Line: lineNo, Text: string(line), Msg: msg}
	if col >= 0 {
		e.Column = d.cols[col].name
		if part != "" {
			e.Column += " (in " + part + ")"
		}
	} else if part != "" {
		e.Msg = msg + " (in " + part + ")"
	}
	return e
}

// envelope reads the top-level fields names of the message body into d.fields (nil
// for an absent field or a JSON null).
func (d *CDCDecoder) envelope(body []byte, names []string) string {
	for i := range d.fields {
		d.fields[i] = nil
	}
	if body[0] != '{' {
		return "expected a JSON object"
	}
	p := skipWS(body, 1)
	if p < len(body) && body[p] == '}' {
		p++
	} else {
		for {
			p = skipWS(body, p)
			if p >= len(body) || body[p] != '"' {
				return offsetMsg("expected a field name", p)
			}
			d.keyBuf = d.keyBuf[:0]
			key, np, msg := scanString(body, p, &d.keyBuf)
			if msg != "" {
				return msg
			}
			p = skipWS(body, np)
			if p >= len(body) || body[p] != ':' {
				return offsetMsg("expected ':'", p)
			}
			p = skipWS(body, p+1)
			start := p
			if p, msg = skipValue(body, p, 0); msg != "" {
				return msg
			}
			for i, n := range names {
				if string(key) == n {
					d.fields[i] = body[start:p]
					if hasLiteral(d.fields[i], 0, "null") {
						d.fields[i] = nil
					}
				}
			}
			p = skipWS(body, p)
			if p < len(body) && body[p] == ',' {
				p++
				continue
			}
			if p < len(body) && body[p] == '}' {
				p++
				break
			}
			return offsetMsg("expected ',' or '}'", p)
		}
	}
	if p = skipWS(body, p); p != len(body) {
		return offsetMsg("unexpected data after the object", p)
	}
	return ""
}

// text returns the string value of an envelope field, and whether it is one; the
// bytes are valid until the next call.
func (d *CDCDecoder) text(v []byte) ([]byte, bool) {
	if len(v) == 0 || v[0] != '"' {
		return nil, false
	}
	d.keyBuf = d.keyBuf[:0]
	s, _, msg := scanString(v, 0, &d.keyBuf)
	return s, msg == ""
}

func (d *CDCDecoder) debezium(body []byte) (string, int, string) {
	if msg := d.envelope(body, debeziumFields); msg != "" {
		return "", -1, msg
	}
	d.schema = d.fields[6]
	if d.opts.SchemaInclude {
		payload := d.fields[3]
		if len(payload) == 0 || payload[0] != '{' {
			return "", -1, `the message has no "payload" object ('debezium-json.schema-include' is true)`
		}
		if msg := d.envelope(payload, debeziumFields); msg != "" {
			return "payload", -1, msg
		}
	} else if d.fields[2] == nil && d.fields[3] != nil {
		return "", -1, `the message has a "payload" but no "op": set 'debezium-json.schema-include' = 'true' for messages with a schema`
	}
	before, after := d.fields[0], d.fields[1]
	op, ok := d.text(d.fields[2])
	if !ok {
		return "", -1, `the message has no "op" string`
	}
	if msg := d.readMeta(); msg != "" {
		return "", -1, msg
	}
	switch string(op) {
	case "c", "r":
		if after == nil {
			return "", -1, `the "after" row of an insert ("op": "` + string(op) + `") is null`
		}
		return d.change(nil, after, true)
	case "u":
		if before == nil {
			return "", -1, `the "before" row of an update ("op": "u") is null (for Debezium's PostgreSQL connector, set the table's REPLICA IDENTITY to FULL)`
		}
		if after == nil {
			return "", -1, `the "after" row of an update ("op": "u") is null`
		}
		return d.change(before, after, true)
	case "d":
		if before == nil {
			return "", -1, `the "before" row of a delete ("op": "d") is null (for Debezium's PostgreSQL connector, set the table's REPLICA IDENTITY to FULL)`
		}
		return d.change(before, nil, true)
	}
	return "", -1, fmt.Sprintf(`unknown "op" %q (expected c, r, u or d)`, op)
}

func (d *CDCDecoder) canal(body []byte) (string, int, string) {
	if msg := d.envelope(body, canalFields); msg != "" {
		return "", -1, msg
	}
	if d.opts.DatabaseInclude != nil {
		if db, _ := d.text(d.fields[3]); !d.opts.DatabaseInclude.Match(db) {
			return "", -1, ""
		}
	}
	if d.opts.TableInclude != nil {
		if t, _ := d.text(d.fields[4]); !d.opts.TableInclude.Match(t) {
			return "", -1, ""
		}
	}
	typ, ok := d.text(d.fields[2])
	if string(d.fields[5]) == "true" || (ok && string(typ) == "CREATE") {
		return "", -1, "" // a DDL statement: no rows
	}
	if !ok {
		return "", -1, `the message has no "type" string`
	}
	if msg := d.readMeta(); msg != "" {
		return "", -1, msg
	}
	var msg string
	if d.rows, msg = arrayElems(d.rows[:0], d.fields[0]); msg != "" {
		return "data", -1, msg
	}
	switch string(typ) {
	case "INSERT", "DELETE":
		return d.changes(string(typ) == "DELETE", nil)
	case "UPDATE":
		if d.olds, msg = arrayElems(d.olds[:0], d.fields[1]); msg != "" {
			return "old", -1, msg
		}
		if len(d.olds) != len(d.rows) {
			return "", -1, fmt.Sprintf(`an UPDATE has %d "data" rows but %d "old" rows`, len(d.rows), len(d.olds))
		}
		return d.changes(false, d.olds)
	}
	return "", -1, fmt.Sprintf(`unknown "type" %q (expected INSERT, UPDATE or DELETE)`, typ)
}

// changes adds canal's rows: inserts, deletes, or with olds updates. A message of
// several rows is checked whole before any is added.
func (d *CDCDecoder) changes(del bool, olds [][]byte) (string, int, string) {
	one := func(i int, add bool) (string, int, string) {
		switch {
		case olds != nil:
			return d.changeOld(olds[i], d.rows[i], add)
		case del:
			return d.change(d.rows[i], nil, add)
		default:
			return d.change(nil, d.rows[i], add)
		}
	}
	if len(d.rows) > 1 {
		for i := range d.rows {
			if part, col, msg := one(i, false); msg != "" {
				return fmt.Sprintf("%s row %d", part, i+1), col, msg
			}
		}
	}
	for i := range d.rows {
		if part, col, msg := one(i, true); msg != "" {
			return part, col, msg
		}
	}
	return "", -1, ""
}

func (d *CDCDecoder) maxwell(body []byte) (string, int, string) {
	if msg := d.envelope(body, maxwellFields); msg != "" {
		return "", -1, msg
	}
	typ, ok := d.text(d.fields[2])
	if !ok {
		return "", -1, `the message has no "type" string`
	}
	data, old := d.fields[0], d.fields[1]
	if data == nil {
		return "", -1, `the message has no "data" row`
	}
	if msg := d.readMeta(); msg != "" {
		return "", -1, msg
	}
	switch string(typ) {
	case "insert":
		return d.change(nil, data, true)
	case "delete":
		return d.change(data, nil, true)
	case "update":
		if old == nil {
			old = []byte("{}") // nothing changed
		}
		return d.changeOld(old, data, true)
	}
	return "", -1, fmt.Sprintf(`unknown "type" %q (expected insert, update or delete)`, typ)
}

// change parses a change with a before row (nil for an insert) and an after row (nil
// for a delete), both JSON objects, and when add, adds its rows: +I, -D, or -U and +U.
func (d *CDCDecoder) change(before, after []byte, add bool) (string, int, string) {
	if before == nil || after == nil {
		part, row, kind := "after", after, exec.Insert
		if after == nil {
			part, row, kind = "before", before, exec.Delete
		}
		if d.opts.Format != Debezium {
			part = "data"
		}
		if col, msg := d.parseRow(row, nil); msg != "" {
			return part, col, msg
		}
		if add {
			d.addRow(d.cells, kind)
		}
		return "", -1, ""
	}
	if col, msg := d.parseRow(before, nil); msg != "" {
		return "before", col, msg
	}
	d.swap()
	if col, msg := d.parseRow(after, nil); msg != "" {
		return "after", col, msg
	}
	if add {
		d.addRow(d.otherCells, exec.UpdateBefore)
		d.addRow(d.cells, exec.UpdateAfter)
	}
	return "", -1, ""
}

// changeOld parses an update of canal or maxwell: old holds the changed fields of the
// before row, data the after row.
func (d *CDCDecoder) changeOld(old, data []byte, add bool) (string, int, string) {
	if col, msg := d.parseRow(data, nil); msg != "" {
		return "data", col, msg
	}
	d.swap()
	if col, msg := d.parseRow(old, d.otherCells); msg != "" {
		return "old", col, msg
	}
	if add {
		d.addRow(d.cells, exec.UpdateBefore)
		d.addRow(d.otherCells, exec.UpdateAfter)
	}
	return "", -1, ""
}

// swap exchanges the decoder's cells (and their string buffers) with the other set.
func (d *CDCDecoder) swap() {
	d.cells, d.otherCells = d.otherCells, d.cells
	d.strBufs, d.otherBufs = d.otherBufs, d.strBufs
}

// arrayElems appends the elements of the JSON array v (nil: none) to dst.
func arrayElems(dst [][]byte, v []byte) ([][]byte, string) {
	if v == nil {
		return dst, ""
	}
	if v[0] != '[' {
		return dst, "expected an array of rows"
	}
	p := skipWS(v, 1)
	if p < len(v) && v[p] == ']' {
		return dst, ""
	}
	for {
		p = skipWS(v, p)
		start := p
		var msg string
		if p, msg = skipValue(v, p, 0); msg != "" {
			return dst, msg
		}
		if v[start] != '{' {
			return dst, "expected an array of rows"
		}
		dst = append(dst, v[start:p])
		p = skipWS(v, p)
		if p < len(v) && v[p] == ',' {
			p++
			continue
		}
		return dst, ""
	}
}

// CDCEncoder writes rows as messages of a changelog format, as Flink does: an
// insert or the after row of an update is an insert message, a delete or the before row
// of an update a delete message (Flink does not combine -U and +U into one update):
//
//	debezium-json  {"before":null,"after":{...},"op":"c"}   {"before":{...},"after":null,"op":"d"}
//	canal-json     {"data":[{...}],"type":"INSERT"}          {"data":[{...}],"type":"DELETE"}
//	maxwell-json   {"data":{...},"type":"insert"}            {"data":{...},"type":"delete"}
//
// Rows are written as the json format writes them.
type CDCEncoder struct {
	format string
	row    *JSONEncoder
}

var _ Encoder = (*CDCEncoder)(nil)

// NewCDCEncoder returns an encoder of opts.Format for rows with the given names.
func NewCDCEncoder(names []string, opts ChangelogOptions) *CDCEncoder {
	return &CDCEncoder{format: opts.Format, row: NewJSONEncoder(names, opts.JSON)}
}

// AppendRow appends row i of b as one message line.
func (e *CDCEncoder) AppendRow(dst []byte, b exec.Batch, i int) []byte {
	del := b.Kind(i).IsRetraction()
	switch e.format {
	case Debezium:
		if del {
			dst = append(dst, `{"before":`...)
			dst = e.row.appendObject(dst, b, i)
			dst = append(dst, `,"after":null,"op":"d"}`...)
		} else {
			dst = append(dst, `{"before":null,"after":`...)
			dst = e.row.appendObject(dst, b, i)
			dst = append(dst, `,"op":"c"}`...)
		}
	case Canal:
		dst = append(dst, `{"data":[`...)
		dst = e.row.appendObject(dst, b, i)
		if del {
			dst = append(dst, `],"type":"DELETE"}`...)
		} else {
			dst = append(dst, `],"type":"INSERT"}`...)
		}
	case Maxwell:
		dst = append(dst, `{"data":`...)
		dst = e.row.appendObject(dst, b, i)
		if del {
			dst = append(dst, `,"type":"delete"}`...)
		} else {
			dst = append(dst, `,"type":"insert"}`...)
		}
	}
	return append(dst, '\n')
}
