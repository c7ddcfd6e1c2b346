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

	fields []span // the fields of the current record
	unq    []byte // unescaped quoted fields of the current record
	fixed  []byte // the current record with invalid UTF-8 replaced
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
		fields:     make([]span, 0, len(schema)),
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
	nf, msg := d.split(line)
	if msg != "" {
		return d.fail(line, lineNo, -1, msg)
	}
	if nf != len(d.cols) {
		return d.fail(line, lineNo, -1, "expected "+strconv.Itoa(len(d.cols))+" fields, found "+strconv.Itoa(nf))
	}
	for i := range d.cols {
		c, v, f := &d.cols[i], &d.cells[i], d.fields[i]
		text := line[f.start:f.end]
		if f.unescaped {
			text = d.unq[f.start:f.end]
		}
		if (d.opts.HasNullLiteral && !f.quoted && string(text) == d.opts.NullLiteral) ||
			(len(text) == 0 && c.kind != planner.String) {
			if c.notNull {
				return d.fail(line, lineNo, i, "NULL is not allowed")
			}
			v.null = true
			continue
		}
		if r := c.parseText(v, text, d.loc); r != "" {
			return d.fail(line, lineNo, i, c.valueError(text, r))
		}
	}
	d.appendCells()
	return nil
}

// span locates a field: line[start:end], or unq[start:end] when unescaped.
type span struct {
	start, end int
	quoted     bool
	unescaped  bool
}

// split cuts line into d.fields (at most one a column) and returns the number of
// fields; msg is set when the quoting is malformed.
func (d *CSVDecoder) split(line []byte) (nf int, msg string) {
	d.fields, d.unq = d.fields[:0], d.unq[:0]
	delim, quote := d.opts.FieldDelimiter, d.opts.QuoteCharacter
	pos := 0
	for {
		var f span
		if quote != 0 && pos < len(line) && line[pos] == quote {
			if f, pos, msg = d.quotedField(line, pos); msg != "" {
				return nf, msg
			}
			if pos < len(line) && line[pos] != delim {
				return nf, "unexpected " + strconv.QuoteRune(rune(line[pos])) + " after a closing quote at offset " + strconv.Itoa(pos)
			}
		} else {
			f.start = pos
			j := indexByte(line[pos:], delim)
			if j < 0 {
				pos = len(line)
			} else {
				pos += j
			}
			f.end = pos
		}
		if nf < len(d.cols) {
			d.fields = append(d.fields, f)
		}
		nf++
		if pos >= len(line) {
			return nf, ""
		}
		pos++ // the delimiter
	}
}

// quotedField reads the quoted field starting at line[pos] (the opening quote). It
// returns the field and the position after the closing quote.
func (d *CSVDecoder) quotedField(line []byte, pos int) (span, int, string) {
	quote := d.opts.QuoteCharacter
	start := pos + 1
	i := start
	segStart := start
	escaped := false
	unqStart := len(d.unq)
	for {
		j := bytes.IndexByte(line[i:], quote)
		if j < 0 {
			return span{}, 0, "unterminated quoted field starting at offset " + strconv.Itoa(pos)
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
		return span{start: start, end: i, quoted: true}, i + 1, ""
	}
	d.unq = append(d.unq, line[segStart:i]...)
	return span{start: unqStart, end: len(d.unq), quoted: true, unescaped: true}, i + 1, ""
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
