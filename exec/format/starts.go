package format

import "bytes"

// RecordStarts finds where a file's records start without decoding them, splitting
// the bytes as RecordEnd does, so that a task reading a share of a file's bytes begins
// at a record. It reads the file from its start, in chunks, carrying its state from one
// to the next: whether a csv quoted field or a comment line is open. Records are lines
// but in csv, where a line break inside a quoted field does not end one.
type RecordStarts struct {
	quote, delim byte // quote 0: no quoted fields
	comments     bool // csv.allow-comments: a line starting with '#' is one record
	inQuote      bool
	quoteEnd     bool // inQuote, and the last byte read was a quote: closing, unless doubled
	comment      bool // in a comment line
	prev         byte // the last byte read outside a quoted field
}

// NewRecordStarts returns the record finder of format configured by opts, at the
// start of a file; nil for the changelog formats, whose records are not read out of
// order.
func NewRecordStarts(format string, opts map[string]string) (*RecordStarts, error) {
	switch format {
	case "json", Raw:
		return &RecordStarts{prev: '\n'}, nil
	case "csv":
		o, err := ParseCSVOptions(opts)
		if err != nil {
			return nil, err
		}
		return &RecordStarts{quote: o.QuoteCharacter, delim: o.FieldDelimiter, comments: o.AllowComments, prev: '\n'}, nil
	}
	return nil, nil
}

// AtStart reports whether the bytes read so far end with a whole record: the next byte
// starts one.
func (s *RecordStarts) AtStart() bool {
	return s.prev == '\n' && !s.inQuote && !s.quoteEnd && !s.comment
}

// Read reads the next chunk of the file. With stop set it returns the index in chunk
// just past the first line break that ends a record, leaving the rest unread, or -1
// when chunk holds none; without, it reads all of chunk and returns -1.
func (s *RecordStarts) Read(chunk []byte, stop bool) int {
	b := chunk
	i := 0
	for i < len(b) {
		switch {
		case s.quoteEnd:
			s.quoteEnd = false
			if b[i] == s.quote { // doubled: still quoted
				i++
				continue
			}
			s.inQuote, s.prev = false, s.quote
			continue
		case s.inQuote:
			j := bytes.IndexByte(b[i:], s.quote)
			if j < 0 {
				return -1
			}
			i += j + 1
			s.quoteEnd = true
			continue
		case s.comment:
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j + 1
			s.comment, s.prev = false, '\n'
			if stop {
				return i
			}
			continue
		case s.comments && s.prev == '\n' && b[i] == '#':
			s.comment = true
			i++
			continue
		}
		// Outside a quoted field: up to the next quote, line breaks end records.
		q := -1
		if s.quote != 0 {
			q = bytes.IndexByte(b[i:], s.quote)
		}
		span := b[i:]
		if q >= 0 {
			span = b[i : i+q]
		}
		if stop {
			if nl := bytes.IndexByte(span, '\n'); nl >= 0 {
				return i + nl + 1
			}
		}
		if len(span) > 0 {
			s.prev = span[len(span)-1]
			if s.comments {
				if nl := bytes.LastIndexByte(span, '\n'); nl >= 0 && nl+1 < len(span) && span[nl+1] == '#' {
					s.comment = true // the quote, if any, is the comment's
					i += nl + 2
					continue
				}
			}
		}
		if q < 0 {
			return -1
		}
		i += q + 1
		// A quote opens a quoted field only at the start of a field.
		if s.prev == s.delim || s.prev == '\n' {
			s.inQuote = true
		} else {
			s.prev = s.quote
		}
	}
	return -1
}
