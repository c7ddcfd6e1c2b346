package format

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
)

// CSVDecoder decodes Flink's header-less csv format. Fields are split on the delimiter;
// a field that starts with the quote character runs to the matching quote, doubled
// quotes inside stand for one, and it may contain delimiters and line breaks. An empty
// field is NULL for every type but STRING, where it is the empty string; an unquoted
// field equal to csv.null-literal is NULL for every type. Values other than strings
// are trimmed of spaces. Invalid UTF-8 is replaced by U+FFFD.
type CSVDecoder struct {
	*rowBuilder
	opts CSVOptions

	unq   []byte // unescaped quoted fields of the current record
	fixed []byte // the current record with invalid UTF-8 replaced
}

var _ Decoder = (*CSVDecoder)(nil)

// NewCSVDecoder returns a csv decoder for schema.
func NewCSVDecoder(schema planner.Schema, mem memory.Allocator, opts CSVOptions) (*CSVDecoder, error) {
	rb, err := newRowBuilder("csv", schema, mem, opts.Location, opts.IgnoreParseErrors)
	if err != nil {
		return nil, err
	}
	return &CSVDecoder{
		rowBuilder: rb,
		opts:       opts,
	}, nil
}

// Decode decodes one record; see Decoder.
func (d *CSVDecoder) Decode(line []byte, lineNo int64) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 || (d.opts.AllowComments && line[0] == '#') {
		return nil
	}
	if !utf8.Valid(line) {
		d.fixed = appendValidUTF8(d.fixed[:0], line)
		line = d.fixed
	}
	// One pass splits the fields and parses each into its cell. After a bad value it
	// only counts the fields: a wrong count is the record's error.
	d.unq = d.unq[:0]
	delim, quote := d.opts.FieldDelimiter, d.opts.QuoteCharacter
	badCol, badMsg := -1, ""
	pos, nf := 0, 0
	for {
		var text []byte
		quoted := false
		if quote != 0 && pos < len(line) && line[pos] == quote {
			var msg string
			if text, pos, msg = d.quotedField(line, pos); msg != "" {
				return d.fail(line, lineNo, -1, msg)
			}
			if pos < len(line) && line[pos] != delim {
				return d.fail(line, lineNo, -1, "unexpected "+strconv.QuoteRune(rune(line[pos]))+" after a closing quote at offset "+strconv.Itoa(pos))
			}
			quoted = true
		} else {
			start := pos
			if j := indexByte(line[pos:], delim); j < 0 {
				pos = len(line)
			} else {
				pos += j
			}
			text = line[start:pos]
		}
		if nf < len(d.cols) && badCol < 0 {
			if msg := d.field(nf, text, quoted); msg != "" {
				badCol, badMsg = nf, msg
			}
		}
		nf++
		if pos >= len(line) {
			break
		}
		pos++ // the delimiter
	}
	if nf != len(d.cols) {
		return d.fail(line, lineNo, -1, "expected "+strconv.Itoa(len(d.cols))+" fields, found "+strconv.Itoa(nf))
	}
	if badCol >= 0 {
		return d.fail(line, lineNo, badCol, badMsg)
	}
	d.appendCells()
	return nil
}

// field parses the text of field i into its cell; it returns a message when the text
// is no value of the column.
func (d *CSVDecoder) field(i int, text []byte, quoted bool) string {
	c, v := &d.cols[i], &d.cells[i]
	if (d.opts.HasNullLiteral && !quoted && string(text) == d.opts.NullLiteral) ||
		(len(text) == 0 && c.kind != planner.String) {
		if c.notNull {
			return "NULL is not allowed"
		}
		v.null = true
		return ""
	}
	if r := c.parseText(v, text, d.loc); r != "" {
		return c.valueError(text, r)
	}
	return ""
}

// quotedField reads the quoted field starting at line[pos] (the opening quote). It
// returns the field's text (a slice of line, or of d.unq when it held doubled quotes)
// and the position after the closing quote.
func (d *CSVDecoder) quotedField(line []byte, pos int) ([]byte, int, string) {
	quote := d.opts.QuoteCharacter
	start := pos + 1
	i := start
	segStart := start
	escaped := false
	unqStart := len(d.unq)
	for {
		j := bytes.IndexByte(line[i:], quote)
		if j < 0 {
			return nil, 0, "unterminated quoted field starting at offset " + strconv.Itoa(pos)
		}
		i += j
		if i+1 < len(line) && line[i+1] == quote {
			// A doubled quote stands for one.
			d.unq = append(d.unq, line[segStart:i+1]...)
			escaped = true
			i += 2
			segStart = i
			continue
		}
		break
	}
	if !escaped {
		return line[start:i], i + 1, ""
	}
	d.unq = append(d.unq, line[segStart:i]...)
	return d.unq[unqStart:], i + 1, ""
}

// RecordEnd returns the end of the first record of buf; see Decoder.
func (d *CSVDecoder) RecordEnd(buf []byte) int {
	nl := bytes.IndexByte(buf, '\n')
	q, delim := d.opts.QuoteCharacter, d.opts.FieldDelimiter
	if nl < 0 || q == 0 || bytes.IndexByte(buf[:nl], q) < 0 || (d.opts.AllowComments && buf[0] == '#') {
		return nl
	}
	// A quote opens a quoted field only at the start of a field.
	inQuote, fieldStart := false, true
	for i := 0; i < len(buf); i++ {
		c := buf[i]
		if inQuote {
			if c == q {
				if i+1 < len(buf) && buf[i+1] == q {
					i++
				} else {
					inQuote = false
				}
			}
			continue
		}
		switch c {
		case '\n':
			return i
		case delim:
			fieldStart = true
			continue
		case q:
			inQuote = fieldStart
		}
		fieldStart = false
	}
	return -1
}

// indexByte is bytes.IndexByte tuned for short fields: it looks at the first 32 bytes
// eight at a time (SWAR) before handing longer ones to bytes.IndexByte.
func indexByte(b []byte, c byte) int {
	pattern := uint64(c) * ones
	i := 0
	for ; i+8 <= len(b) && i < 32; i += 8 {
		if m := zeroBytes(binary.LittleEndian.Uint64(b[i:]) ^ pattern); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	if i >= 32 {
		if j := bytes.IndexByte(b[i:], c); j >= 0 {
			return i + j
		}
		return -1
	}
	for ; i < len(b); i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}
