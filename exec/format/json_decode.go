package format

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// maxJSONDepth bounds the nesting of the values of ignored fields.
const maxJSONDepth = 1000

// JSONDecoder decodes Flink's json format: one JSON object a line. Fields match
// columns by name, case-sensitively; a missing field or JSON null is NULL (a missing
// field is an error with json.fail-on-missing-field); unknown fields are skipped,
// whatever they hold. Numeric columns take numbers or numeric strings; TIMESTAMP and
// DATE columns take strings in the csv text forms, timestamps also epoch milliseconds;
// STRING columns take any value (a number or a nested value as its JSON text); ROW, ARRAY
// and MAP columns take objects and arrays (see nestedCol). For a duplicated field the
// last value wins. Invalid UTF-8 is replaced by U+FFFD.
type JSONDecoder struct {
	*rowBuilder
	opts    JSONOptions
	index   map[string]int
	next    int      // the column expected next, for the common case of fields in order
	keyBuf  []byte   // an unescaped field name
	strBufs [][]byte // unescaped string values, one buffer a column
	// quoted holds each column's name and the closing quote, nil for a name a JSON
	// string cannot hold unescaped.
	quoted []quotedName
}

var _ Decoder = (*JSONDecoder)(nil)

// NewJSONDecoder returns a json decoder for schema.
func NewJSONDecoder(schema planner.Schema, mem memory.Allocator, opts JSONOptions) (*JSONDecoder, error) {
	rb, err := newRowBuilder("json", schema, mem, opts.Location, opts.IgnoreParseErrors)
	if err != nil {
		return nil, err
	}
	d := &JSONDecoder{
		rowBuilder: rb,
		opts:       opts,
		index:      make(map[string]int, len(schema)),
		strBufs:    make([][]byte, len(schema)),
	}
	d.quoted = make([]quotedName, len(schema))
	for i, c := range schema {
		if _, dup := d.index[c.Name]; !dup {
			d.index[c.Name] = i
		}
		if plainJSON(c.Name) {
			d.quoted[i] = newQuotedName(c.Name)
		}
	}
	return d, nil
}

// Decode decodes one record; see Decoder.
func (d *JSONDecoder) Decode(line []byte, lineNo int64) error {
	body := trimSpace(line)
	if len(body) == 0 {
		return nil
	}
	// Invalid UTF-8 is replaced where it can reach a value: scanString checks each
	// string; elsewhere a byte above ASCII is a syntax error.
	if col, msg := d.parseRow(body, nil); msg != "" {
		return d.fail(line, lineNo, col, msg)
	}
	d.appendCells()
	return nil
}

// parseRow parses the JSON object body into the cells and checks them. A field the
// object lacks takes its value from fallback when that is given (a changelog's "old"
// row, which holds only the fields that changed), else is NULL (an error with
// json.fail-on-missing-field). On error it returns the offending column (or -1) and a
// message.
func (d *JSONDecoder) parseRow(body []byte, fallback []cell) (int, string) {
	for i := range d.cells {
		d.cells[i].set = false
	}
	if col, msg := d.object(body); msg != "" {
		return col, msg
	}
	for i := range d.cols {
		v := &d.cells[i]
		if !v.set {
			switch {
			case fallback != nil:
				*v = fallback[i]
			case d.opts.FailOnMissingField:
				return i, "missing field"
			default:
				v.null = true
			}
		}
		if v.null && d.cols[i].notNull {
			return i, "NULL is not allowed"
		}
	}
	return -1, ""
}

// plainJSON says whether s is a JSON string's text as it is: no quote, backslash or
// control character, valid UTF-8.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < ' ' {
			return false
		}
	}
	return utf8.ValidString(s)
}

func skipWS(b []byte, p int) int {
	for p < len(b) && b[p] <= ' ' && isSpace(b[p]) {
		p++
	}
	return p
}

func offsetMsg(what string, p int) string {
	return what + " at offset " + strconv.Itoa(p)
}

// object parses the record's object into the cells. On error it returns the index of
// the offending column (or -1) and a message.
func (d *JSONDecoder) object(b []byte) (int, string) {
	if b[0] != '{' {
		return -1, "expected a JSON object"
	}
	p := skipWS(b, 1)
	if p < len(b) && b[p] == '}' {
		p++
	} else {
		for {
			p = skipWS(b, p)
			if p >= len(b) || b[p] != '"' {
				return -1, offsetMsg("expected a field name", p)
			}
			// Fields mostly come in the columns' order: the expected name, quoted,
			// needs no scan.
			ci, np := d.expected(b, p)
			var msg string
			if ci < 0 {
				d.keyBuf = d.keyBuf[:0]
				var key []byte
				if key, np, msg = scanString(b, p, &d.keyBuf); msg != "" {
					return -1, msg
				}
				ci = d.lookup(key)
			}
			p = skipWS(b, np)
			if p >= len(b) || b[p] != ':' {
				return -1, offsetMsg("expected ':'", p)
			}
			p = skipWS(b, p+1)
			if p >= len(b) {
				return -1, offsetMsg("expected a value", p)
			}
			if ci >= 0 {
				if p, msg = d.value(ci, b, p); msg != "" {
					return ci, msg
				}
			} else if p, msg = skipValue(b, p, 0); msg != "" {
				return -1, msg
			}
			p = skipWS(b, p)
			if p < len(b) && b[p] == ',' {
				p++
				continue
			}
			if p < len(b) && b[p] == '}' {
				p++
				break
			}
			return -1, offsetMsg("expected ',' or '}'", p)
		}
	}
	if p = skipWS(b, p); p != len(b) {
		return -1, offsetMsg("unexpected data after the object", p)
	}
	return -1, ""
}

// expected returns the column expected next and the end of its quoted name when the
// string at b[p] is that name, else -1.
func (d *JSONDecoder) expected(b []byte, p int) (int, int) {
	n := d.next
	if n >= len(d.cols) {
		n = 0 // the first field of the next record
	}
	if !d.quoted[n].at(b, p+1) {
		return -1, p
	}
	d.next = n + 1
	return n, p + 1 + len(d.quoted[n].text)
}

// quotedName is a field name and its closing quote as a record holds it, and its first
// 16 bytes as two words with their masks, to compare in two loads.
type quotedName struct {
	text []byte // nil: the name needs escapes
	word [2]uint64
	mask [2]uint64
}

func newQuotedName(name string) quotedName {
	q := quotedName{text: []byte(name + `"`)}
	for i, c := range q.text[:min(len(q.text), 16)] {
		q.word[i/8] |= uint64(c) << (8 * (i % 8))
		q.mask[i/8] |= 0xff << (8 * (i % 8))
	}
	return q
}

// at says whether b holds the quoted name at i.
func (q *quotedName) at(b []byte, i int) bool {
	n := len(q.text)
	if q.text == nil || len(b)-i < n {
		return false
	}
	if n > 16 || len(b)-i < 16 {
		return string(b[i:i+n]) == string(q.text)
	}
	return binary.LittleEndian.Uint64(b[i:])&q.mask[0] == q.word[0] &&
		binary.LittleEndian.Uint64(b[i+8:])&q.mask[1] == q.word[1]
}

// lookup returns the column named key, or -1.
func (d *JSONDecoder) lookup(key []byte) int {
	n := d.next
	if n >= len(d.cols) {
		n = 0 // the first field of the next record
	}
	if string(key) == d.cols[n].name {
		d.next = n + 1
		return n
	}
	if i, ok := d.index[string(key)]; ok {
		d.next = i + 1
		return i
	}
	return -1
}

// value parses the value at b[p] into column ci's cell.
func (d *JSONDecoder) value(ci int, b []byte, p int) (int, string) {
	c, v := &d.cols[ci], &d.cells[ci]
	v.set = true
	if c.nested != nil && !hasLiteral(b, p, "null") {
		tree, np, msg := c.nested.parse(b, p, d.loc, 0)
		v.tree, v.null = tree, false
		return np, msg
	}
	var text []byte
	np := p
	switch ch := b[p]; {
	case ch == '"':
		d.strBufs[ci] = d.strBufs[ci][:0]
		var msg string
		if text, np, msg = scanString(b, p, &d.strBufs[ci]); msg != "" {
			return np, msg
		}
		if c.kind == planner.String {
			v.s, v.null = text, false
			return np, ""
		}
	case ch == 'n':
		if !hasLiteral(b, p, "null") {
			return p, offsetMsg("invalid literal", p)
		}
		v.null = true
		return p + 4, ""
	case ch == 't' || ch == 'f':
		lit := "true"
		if ch == 'f' {
			lit = "false"
		}
		if !hasLiteral(b, p, lit) {
			return p, offsetMsg("invalid literal", p)
		}
		np = p + len(lit)
		text = b[p:np]
		if c.kind != planner.Boolean && c.kind != planner.String {
			return np, c.valueError(text, reasonSyntax)
		}
	case ch == '-' || (ch >= '0' && ch <= '9'):
		if c.kind == planner.BigInt {
			if n, end, ok := plainInt(b, p); ok {
				v.i, v.null = n, false
				return end, ""
			}
		}
		var ok bool
		if np, ok = scanNumber(b, p); !ok {
			return np, offsetMsg("invalid number", p)
		}
		text = b[p:np]
		if c.kind == planner.Boolean || c.kind == planner.Date || c.kind == planner.Time {
			return np, c.valueError(text, reasonSyntax)
		}
	case ch == '{' || ch == '[':
		var msg string
		if np, msg = skipValue(b, p, 0); msg != "" {
			return np, msg
		}
		text = b[p:np]
		if c.kind != planner.String {
			return np, c.valueError(text, reasonSyntax)
		}
		text = compactText(text)
	default:
		return p, offsetMsg("unexpected "+strconv.QuoteRune(rune(ch)), p)
	}
	if r := c.parseText(v, text, d.loc); r != "" {
		return np, c.valueError(text, r)
	}
	return np, ""
}

func hasLiteral(b []byte, p int, lit string) bool {
	return len(b)-p >= len(lit) && string(b[p:p+len(lit)]) == lit
}

// plainInt reads the JSON number at b[p] when it is an integer of at most 18 digits,
// as most BIGINT values are; otherwise ok is false and the caller reads it as text.
func plainInt(b []byte, p int) (n int64, end int, ok bool) {
	i := p
	neg := b[i] == '-'
	if neg {
		i++
	}
	start := i
	for ; i < len(b) && i-start <= 18 && b[i]-'0' <= 9; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	if i == start || i-start > 18 || (i < len(b) && (b[i] == '.' || b[i]|0x20 == 'e')) {
		return 0, p, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}

// scanNumber returns the end of the JSON number at b[p].
func scanNumber(b []byte, p int) (int, bool) {
	i := p
	if i < len(b) && b[i] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i]-'0' <= 9 {
		i++
	}
	if i == start {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		s := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == s {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == s {
			return i, false
		}
	}
	return i, true
}

// scanString reads the JSON string whose opening quote is at b[p]. Without escapes or
// invalid UTF-8 the result is a slice of b; otherwise it is unescaped into *buf, with
// invalid UTF-8 replaced by U+FFFD.
func scanString(b []byte, p int, buf *[]byte) ([]byte, int, string) {
	i := p + 1
	// Eight bytes at a time while no quote, backslash or byte above ASCII is among them
	// (SWAR: a zero byte of w^pattern marks a match; the lowest marked byte is exact).
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := zeroBytes(w^quotes) | zeroBytes(w^backslashes) | w&highs; m != 0 {
			i += bits.TrailingZeros64(m) / 8
			break
		}
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[p+1 : i], i + 1, ""
		case c == '\\':
			return unescapeString(b, p, i, buf)
		case c >= utf8.RuneSelf:
			return scanText(b, p, i, buf)
		}
	}
	return nil, len(b), offsetMsg("unterminated string starting", p)
}

// scanText continues scanString from the first byte above ASCII at b[i]: it checks the
// string's UTF-8.
func scanText(b []byte, p, i int, buf *[]byte) ([]byte, int, string) {
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			s := b[p+1 : i]
			if !utf8.Valid(s) {
				*buf = appendValidUTF8((*buf)[:0], s)
				s = *buf
			}
			return s, i + 1, ""
		case '\\':
			return unescapeString(b, p, i, buf)
		}
	}
	return nil, len(b), offsetMsg("unterminated string starting", p)
}

// compactText is a nested JSON value's text as a STRING column takes it: compact, as
// in Flink, and valid UTF-8.
func compactText(text []byte) []byte {
	var compact bytes.Buffer
	if json.Compact(&compact, text) == nil {
		text = compact.Bytes()
	}
	if !utf8.Valid(text) {
		text = appendValidUTF8(nil, text)
	}
	return text
}

const (
	ones        = 0x0101010101010101
	highs       = 0x8080808080808080
	quotes      = '"' * ones
	backslashes = '\\' * ones
)

// zeroBytes marks the zero bytes of w with their high bit (the lowest mark is exact;
// marks above it may be false).
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w & highs }

// unescapeString continues scanString from the first backslash at b[i]; invalid UTF-8
// in the result is replaced.
func unescapeString(b []byte, p, i int, buf *[]byte) ([]byte, int, string) {
	out := append((*buf)[:0], b[p+1:i]...)
	defer func() { *buf = out }()
	for i < len(b) {
		c := b[i]
		if c == '"' {
			if !utf8.Valid(out) {
				out = appendValidUTF8(nil, out)
			}
			return out, i + 1, ""
		}
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return out, i, offsetMsg("invalid \\u escape", i)
			}
			i += 6
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by an escaped low one is one code point;
				// a lone surrogate becomes U+FFFD.
				if r2, ok := hex4(b, i+2); ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return out, i, offsetMsg("invalid escape "+strconv.Quote(string(b[i:i+2])), i)
		}
		i += 2
	}
	return out, i, offsetMsg("unterminated string starting", p)
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipValue returns the end of the JSON value at b[p], checking its syntax.
func skipValue(b []byte, p, depth int) (int, string) {
	if p >= len(b) {
		return p, offsetMsg("expected a value", p)
	}
	switch c := b[p]; {
	case c == '"':
		i := p + 1
		for i < len(b) {
			switch b[i] {
			case '"':
				return i + 1, ""
			case '\\':
				i++
			}
			i++
		}
		return i, offsetMsg("unterminated string starting", p)
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return p, offsetMsg("nesting too deep", p)
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i := skipWS(b, p+1)
		if i < len(b) && b[i] == closer {
			return i + 1, ""
		}
		for {
			i = skipWS(b, i)
			var msg string
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, offsetMsg("expected a field name", i)
				}
				if i, msg = skipValue(b, i, depth+1); msg != "" {
					return i, msg
				}
				i = skipWS(b, i)
				if i >= len(b) || b[i] != ':' {
					return i, offsetMsg("expected ':'", i)
				}
				i = skipWS(b, i+1)
			}
			if i, msg = skipValue(b, i, depth+1); msg != "" {
				return i, msg
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == closer {
				return i + 1, ""
			}
			return i, offsetMsg("expected ',' or "+strconv.QuoteRune(rune(closer)), i)
		}
	case c == 't':
		if hasLiteral(b, p, "true") {
			return p + 4, ""
		}
	case c == 'f':
		if hasLiteral(b, p, "false") {
			return p + 5, ""
		}
	case c == 'n':
		if hasLiteral(b, p, "null") {
			return p + 4, ""
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if i, ok := scanNumber(b, p); ok {
			return i, ""
		}
		return p, offsetMsg("invalid number", p)
	}
	return p, offsetMsg("invalid value", p)
}

// RecordEnd returns the end of the first record of buf: its first '\n'.
func (d *JSONDecoder) RecordEnd(buf []byte) int { return bytes.IndexByte(buf, '\n') }
