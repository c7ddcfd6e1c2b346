package parser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Error is a syntax error.
type Error struct {
	Pos  Pos    // where the error is, 1-based line and column (in characters)
	Msg  string // what went wrong, e.g. `unexpected "FORM", expected FROM`
	Line string // the source line holding Pos, without its newline
}

// Error returns the position and message, then the source line and a caret under the
// error's column:
//
//	2:15: unexpected "FORM", expected FROM
//	  SELECT a, b FORM t
//	              ^
func (e *Error) Error() string {
	var pad strings.Builder
	for i, r := range []rune(e.Line) {
		if i >= e.Pos.Column-1 {
			break
		}
		if r == '\t' {
			pad.WriteRune('\t')
		} else {
			pad.WriteRune(' ')
		}
	}
	return fmt.Sprintf("%d:%d: %s\n%s\n%s^", e.Pos.Line, e.Pos.Column, e.Msg, e.Line, pad.String())
}

func errorAt(pos Pos, msg string) *Error { return &Error{Pos: pos, Msg: msg} }

// unexpected reports token t where one of the alternatives was expected. Alternatives are in
// user words: keywords bare (FROM), punctuation quoted (')'), or a phrase (expression).
func unexpected(t *lexer.Token, alternatives ...string) *Error {
	msg := "unexpected " + describe(t)
	if len(alternatives) > 0 {
		msg += ", expected " + oneOf(alternatives)
	}
	return errorAt(t.Pos, msg)
}

// describe names a token in an error message.
func describe(t *lexer.Token) string {
	if t.EOF() {
		return "end of input"
	}
	return strconv.Quote(t.Value)
}

// oneOf joins alternatives as "a", "a or b", "a, b or c".
func oneOf(alts []string) string {
	if len(alts) == 1 {
		return alts[0]
	}
	return strings.Join(alts[:len(alts)-1], ", ") + " or " + alts[len(alts)-1]
}

// withSource completes err for the API: any error becomes an *Error carrying its source line.
func withSource(err error, src string) *Error {
	var e *Error
	if !errors.As(err, &e) {
		e = fromParticiple(err, nil)
	}
	lines := strings.Split(src, "\n")
	if e.Pos.Line >= 1 && e.Pos.Line <= len(lines) {
		e.Line = strings.TrimSuffix(lines[e.Pos.Line-1], "\r")
	}
	return e
}

// fromParticiple translates an error of the participle grammar into an *Error in user
// words. Participle says `unexpected token "x" (expected <EBNF of what was left to parse>)`;
// the first terms of that EBNF are what was expected. fallback is used when participle does
// not say (it does not when nothing at all matched).
func fromParticiple(err error, fallback []string) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) {
		var alts []string
		msg := ute.Message()
		if i := strings.Index(msg, " (expected "); i >= 0 {
			alts = firstOf(strings.TrimSuffix(msg[i+len(" (expected "):], ")"))
		}
		if len(alts) == 0 {
			alts = fallback
		}
		return unexpectedOrNearMiss(&ute.Unexpected, alts)
	}
	var perr participle.Error
	if errors.As(err, &perr) {
		return errorAt(perr.Position(), "syntax error: "+perr.Message())
	}
	return errorAt(Pos{Line: 1, Column: 1}, err.Error())
}

// unexpectedOrNearMiss is unexpected, except that a misspelt keyword (FORM where FROM was
// expected) is reported as expecting just that keyword.
func unexpectedOrNearMiss(t *lexer.Token, alts []string) *Error {
	if kw := nearMiss(t, alts); kw != "" {
		return unexpected(t, kw)
	}
	return unexpected(t, alts...)
}

// nearMiss returns the keyword among candidates that the unquoted identifier t is probably
// a misspelling of, or "".
func nearMiss(t *lexer.Token, candidates []string) string {
	if t.Type != tokIdent || len(t.Value) < 3 {
		return ""
	}
	word := strings.ToUpper(t.Value)
	for _, kw := range candidates {
		if !isKeywordText(kw) || len(kw) < 3 || kw == word {
			continue
		}
		limit := 1
		if len(kw) > 5 {
			limit = 2
		}
		if editDistance(word, kw) <= limit {
			return kw
		}
	}
	return ""
}

func isKeywordText(s string) bool {
	for _, r := range s {
		if (r < 'A' || r > 'Z') && r != '_' {
			return false
		}
	}
	return s != ""
}

// editDistance is the optimal string alignment distance: insertions, deletions,
// substitutions and transpositions of adjacent characters each cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// show writes a keyword bare and punctuation quoted, as error messages do.
func show(s string) string {
	if isKeywordText(s) {
		return s
	}
	return "'" + s + "'"
}
