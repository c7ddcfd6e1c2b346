package parser

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// sqlLexer defines the tokens SQL text splits into; scan implements it. Rules are tried in order; whitespace and comments
// (lower-case rule names) are dropped. The Unterminated* and Invalid rules never reach the
// grammar: tokenize turns them into lexical errors, so the lexer itself cannot fail.
var sqlLexer = lexer.MustSimple([]lexer.SimpleRule{
	// Keyword never matches text: tokenize retypes Ident tokens that are reserved words.
	{Name: "Keyword", Pattern: `[^\s\S]`},
	{Name: "Hint", Pattern: `/\*\+[\s\S]*?\*/`},
	{Name: "comment", Pattern: `--[^\n]*|/\*[\s\S]*?\*/`},
	{Name: "UnterminatedComment", Pattern: `/\*[\s\S]*`},
	{Name: "whitespace", Pattern: `\s+`},
	{Name: "String", Pattern: `'(?:[^']|'')*'`},
	{Name: "UnterminatedString", Pattern: `'[\s\S]*`},
	{Name: "QuotedIdent", Pattern: "`(?:[^`]|``)*`"},
	{Name: "UnterminatedQuotedIdent", Pattern: "`[\\s\\S]*"},
	{Name: "Number", Pattern: `(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`},
	{Name: "Ident", Pattern: identPattern},
	{Name: "Punct", Pattern: `<>|!=|<=|>=|\|\||[-+*/%=<>(),.;\[\]?{}|]`},
	{Name: "Invalid", Pattern: `[\s\S]`},
})

// identPattern is an unquoted identifier; anything else must be written `quoted`.
const identPattern = `[\p{L}_][\p{L}\p{N}_$]*`

var plainIdentRE = regexp.MustCompile(`^` + identPattern + `$`)

// Token types of sqlLexer.
var (
	tokKeyword     = sqlLexer.Symbols()["Keyword"]
	tokString      = sqlLexer.Symbols()["String"]
	tokQuotedIdent = sqlLexer.Symbols()["QuotedIdent"]
	tokNumber      = sqlLexer.Symbols()["Number"]
	tokIdent       = sqlLexer.Symbols()["Ident"]
	tokPunct       = sqlLexer.Symbols()["Punct"]
	tokHint        = sqlLexer.Symbols()["Hint"] // /*+ ... */, elided but where hintsG reads it
)

var (
	tokUnterminatedComment     = sqlLexer.Symbols()["UnterminatedComment"]
	tokUnterminatedString      = sqlLexer.Symbols()["UnterminatedString"]
	tokUnterminatedQuotedIdent = sqlLexer.Symbols()["UnterminatedQuotedIdent"]
)

// lexicalErrors maps the token types that only exist to be reported to their message.
var lexicalErrors = map[lexer.TokenType]string{
	tokUnterminatedComment:     "unterminated comment",
	tokUnterminatedString:      "unterminated string literal",
	tokUnterminatedQuotedIdent: "unterminated quoted identifier",
}

var tokInvalid = sqlLexer.Symbols()["Invalid"]

// reserved lists the words that cannot be used as unquoted identifiers, because an
// identifier in their place would make the grammar ambiguous (mostly: a word that can follow
// an expression or a table, where an identifier would be read as an implicit alias). All
// other keywords (TABLE, KEY, VALUE, TIMESTAMP, DATE, YEAR, INTERVAL, CAST, POSITION, ...)
// are identifiers wherever the grammar does not expect them as keywords. Some reserved words
// are not used by the grammar yet (LIMIT, UNION, USING, LATERAL, ...): they are reserved now
// so that adding those clauses later does not break existing queries. PARTITION, BY, ASC and
// DESC are not reserved: the grammar reads them only where no identifier can stand (BY after
// GROUP, ORDER or PARTITION; PARTITION first in an OVER window or after a window function's
// table; ASC and DESC after an ORDER BY expression), and `partition` is a common column name
// (Kafka's metadata column).
var reserved = map[string]bool{
	// query structure
	"SELECT": true, "FROM": true, "WHERE": true, "GROUP": true, "HAVING": true,
	"ORDER": true, "LIMIT": true, "AS": true, "DISTINCT": true, "ALL": true,
	"UNION": true, "INTERSECT": true, "EXCEPT": true,
	// joins, temporal joins and OVER windows
	"JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "OUTER": true,
	"CROSS": true, "NATURAL": true, "LATERAL": true, "ON": true, "USING": true, "FOR": true,
	"OVER": true,
	// expressions
	"AND": true, "OR": true, "NOT": true, "IS": true, "IN": true, "LIKE": true,
	"BETWEEN": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true,
	"NULL": true, "TRUE": true, "FALSE": true,
	// niladic functions, written without parentheses
	"CURRENT_TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true,
	"LOCALTIMESTAMP": true, "LOCALTIME": true,
}

// isReserved reports whether word (any case) is a reserved word.
func isReserved(word string) bool {
	var upper [len("CURRENT_TIMESTAMP")]byte
	if len(word) > len(upper) {
		return false
	}
	for i := range len(word) {
		c := word[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper[i] = c
	}
	return reserved[string(upper[:len(word)])] // the conversion in a map index does not allocate
}

// tokenize lexes src into the token stream the grammar reads, ending with EOF. Reserved
// words become Keyword tokens. It fails with an *Error on the first lexical error, or if
// parentheses nest deeper than maxDepth. The EOF token is placed right after the last
// token, so that "unexpected end of input" points at the end of the text rather than at
// trailing blank lines or comments.
func tokenize(src string) (*lexer.PeekingLexer, error) {
	lex, err := lexer.Upgrade(&checkedScanner{scanner: newScanner(src)}, tokHint)
	if err != nil {
		return nil, err
	}
	return lex, nil
}

// lexAll returns all tokens of src, keywords retyped, with a final EOF token.
func lexAll(src string) []lexer.Token {
	var toks []lexer.Token
	for s := newScanner(src); ; {
		t, _ := s.Next()
		if toks = append(toks, t); t.EOF() {
			return toks
		}
	}
}

// scanner is the lexer.Lexer of scan: it returns src's tokens one at a time, reserved
// words retyped as keywords, and then an EOF token right after the last one.
type scanner struct {
	rest     string
	pos, end lexer.Position
}

func newScanner(src string) *scanner {
	start := lexer.Position{Line: 1, Column: 1}
	return &scanner{rest: src, pos: start, end: start}
}

// Next never fails: what is not SQL is a token of a type tokenize reports.
func (s *scanner) Next() (lexer.Token, error) {
	for s.rest != "" {
		typ, n := scan(s.rest)
		value, pos := s.rest[:n], s.pos
		s.pos.Advance(value)
		s.rest = s.rest[n:]
		if typ == tokSkipped {
			continue
		}
		if typ == tokIdent && isReserved(value) {
			typ = tokKeyword
		}
		s.end = s.pos
		return lexer.Token{Type: typ, Value: value, Pos: pos}, nil
	}
	return lexer.Token{Type: lexer.EOF, Pos: s.end}, nil
}

// checkedScanner fails at the first lexical error, and at parentheses nested deeper
// than maxDepth.
type checkedScanner struct {
	*scanner
	depth int
}

func (s *checkedScanner) Next() (lexer.Token, error) {
	t, _ := s.scanner.Next()
	if msg, ok := lexicalErrors[t.Type]; ok {
		return t, errorAt(t.Pos, msg)
	}
	switch {
	case t.Type == tokInvalid:
		return t, errorAt(t.Pos, invalidCharMessage(t.Value))
	case isPunct(&t, "("):
		if s.depth++; s.depth > maxDepth {
			return t, errorAt(t.Pos, "parentheses nested too deeply")
		}
	case isPunct(&t, ")"):
		s.depth--
	}
	return t, nil
}

// tokSkipped is the type scan gives whitespace and comments.
const tokSkipped lexer.TokenType = -100

// scan returns the type and length of the token src starts with, by the rules of
// sqlLexer (which stays the grammar's definition of the token types, and which
// TestScanMatchesLexerRules holds scan to), without the cost of its regular expressions.
func scan(src string) (lexer.TokenType, int) {
	c := src[0]
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
		n := 1
		for n < len(src) && (src[n] == ' ' || src[n] == '\t' || src[n] == '\n' || src[n] == '\r' || src[n] == '\f') {
			n++
		}
		return tokSkipped, n
	case strings.HasPrefix(src, "--"):
		if n := strings.IndexByte(src, '\n'); n >= 0 {
			return tokSkipped, n
		}
		return tokSkipped, len(src)
	case strings.HasPrefix(src, "/*"):
		if n := strings.Index(src[2:], "*/"); n >= 0 {
			if strings.HasPrefix(src, "/*+") && n > 0 {
				return tokHint, n + 4
			}
			return tokSkipped, n + 4
		}
		return tokUnterminatedComment, len(src)
	case c == '\'':
		return quoted(src, '\'', tokString, tokUnterminatedString)
	case c == '`':
		return quoted(src, '`', tokQuotedIdent, tokUnterminatedQuotedIdent)
	case isDigit(c) || c == '.' && len(src) > 1 && isDigit(src[1]):
		return tokNumber, number(src)
	}
	if r, n := utf8.DecodeRuneInString(src); r == '_' || unicode.IsLetter(r) {
		for n < len(src) {
			r, w := utf8.DecodeRuneInString(src[n:])
			if r != '_' && r != '$' && !unicode.IsLetter(r) && !unicode.IsNumber(r) {
				break
			}
			n += w
		}
		return tokIdent, n
	}
	if len(src) > 1 {
		switch src[:2] {
		case "<>", "!=", "<=", ">=", "||":
			return tokPunct, 2
		}
	}
	if strings.IndexByte("-+*/%=<>(),.;[]?{}|", c) >= 0 {
		return tokPunct, 1
	}
	_, n := utf8.DecodeRuneInString(src)
	return tokInvalid, n
}

// quoted scans a literal in quote characters, a doubled quote standing for one. Left
// open, it ends, as the rule's regular expression backtracks, at the first quote of
// its last doubled one, if any.
func quoted(src string, quote byte, typ, unterminated lexer.TokenType) (lexer.TokenType, int) {
	lastPair := -1
	for n := 1; n < len(src); n++ {
		if src[n] != quote {
			continue
		}
		if n+1 < len(src) && src[n+1] == quote {
			lastPair = n
			n++
			continue
		}
		return typ, n + 1
	}
	if lastPair >= 0 {
		return typ, lastPair + 1
	}
	return unterminated, len(src)
}

// number scans digits[.digits] or .digits, then an optional exponent.
func number(src string) int {
	n := digits(src, 0)
	if n < len(src) && src[n] == '.' {
		n = digits(src, n+1)
	}
	if n < len(src) && (src[n] == 'e' || src[n] == 'E') {
		e := n + 1
		if e < len(src) && (src[e] == '+' || src[e] == '-') {
			e++
		}
		if d := digits(src, e); d > e {
			n = d
		}
	}
	return n
}

func digits(src string, n int) int {
	for n < len(src) && isDigit(src[n]) {
		n++
	}
	return n
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func invalidCharMessage(c string) string {
	switch c {
	case `"`:
		return `unexpected character '"': write strings as '...' and quoted identifiers as ` + "`...`"
	case "!":
		return `unexpected character "!", did you mean "!=" or NOT?`
	}
	return "unexpected character " + strconv.Quote(c)
}

// Complete reports whether text holds at least one whole statement: it ends with ';'
// outside quotes and comments (trailing whitespace and comments ignored). The REPL uses it
// to decide whether to read another line.
func Complete(text string) bool {
	toks := lexAll(text)
	if len(toks) < 2 {
		return false
	}
	// An unterminated string or comment would be the last token, not a ';'.
	last := toks[len(toks)-2] // before EOF
	return last.Type == tokPunct && last.Value == ";" && !statementSetOpen(toks)
}

// isKeyword reports whether t is the reserved word kw.
func isKeyword(t *lexer.Token, kw string) bool {
	return t.Type == tokKeyword && strings.EqualFold(t.Value, kw)
}

// isWord reports whether t is the non-reserved keyword w, written without quotes.
func isWord(t *lexer.Token, w string) bool {
	return t.Type == tokIdent && strings.EqualFold(t.Value, w)
}

// isPunct reports whether t is the operator or punctuation s.
func isPunct(t *lexer.Token, s string) bool { return t.Type == tokPunct && t.Value == s }

// isName reports whether t is an identifier, quoted or not.
func isName(t *lexer.Token) bool { return t.Type == tokIdent || t.Type == tokQuotedIdent }

// identText is the name an Ident or QuotedIdent token stands for.
func identText(t *lexer.Token) string {
	if t.Type == tokQuotedIdent {
		return unquoteIdent(t.Value)
	}
	return t.Value
}

// unquoteString returns the value of a '...' literal token.
func unquoteString(tok string) string {
	return strings.ReplaceAll(tok[1:len(tok)-1], "''", "'")
}

// unquoteIdent returns the name a `...` token stands for.
func unquoteIdent(tok string) string {
	return strings.ReplaceAll(tok[1:len(tok)-1], "``", "`")
}
