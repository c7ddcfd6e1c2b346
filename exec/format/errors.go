package format

import (
	"strconv"
	"strings"
)

// ParseError reports a record that cannot be decoded.
type ParseError struct {
	Line   int64  // 1-based line number of the record in its file or stream
	Text   string // the offending record
	Column string // the column whose value is bad; empty when the record as a whole is
	Msg    string // what is wrong, e.g. `cannot parse "abc" as DOUBLE`
}

// maxErrorText bounds how much of the offending record and value an error message
// quotes; ParseError.Text keeps all of it.
const maxErrorText = 200

// Error returns one sentence: `line 17: cannot parse "abc" as DOUBLE for column
// temperature: "sensor_1,abc,3"`.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString("line ")
	b.WriteString(strconv.FormatInt(e.Line, 10))
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Column != "" {
		b.WriteString(" for column ")
		b.WriteString(e.Column)
	}
	b.WriteString(": ")
	b.WriteString(quoteClipped(e.Text))
	return b.String()
}

// quoteClipped quotes s as Go does, cut to maxErrorText bytes (on a rune boundary).
func quoteClipped(s string) string {
	if len(s) <= maxErrorText {
		return strconv.Quote(s)
	}
	cut := maxErrorText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return strconv.Quote(s[:cut] + "...")
}
