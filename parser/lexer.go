package parser

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// sqlLexer splits SQL text into tokens. Rules are tried in order; whitespace and comments
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
	{Name: "Punct", Pattern: `<>|!=|<=|>=|\|\||[-+*/%=<>(),.;\[\]]`},
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

// lexicalErrors maps the token types that only exist to be reported to their message.
var lexicalErrors = map[lexer.TokenType]string{
	sqlLexer.Symbols()["UnterminatedComment"]:     "unterminated comment",
	sqlLexer.Symbols()["UnterminatedString"]:      "unterminated string literal",
	sqlLexer.Symbols()["UnterminatedQuotedIdent"]: "unterminated quoted identifier",
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
func isReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// tokenize lexes src into the token stream the grammar reads, ending with EOF. Reserved
// words become Keyword tokens. It fails with an *Error on the first lexical error, or if
// parentheses nest deeper than maxDepth. The EOF
// token is placed right after the last token, so that "unexpected end of input" points at
// the end of the text rather than at trailing blank lines or comments.
func tokenize(src string) (*lexer.PeekingLexer, error) {
	toks, err := lexAll(src)
	if err != nil {
		return nil, err
	}
	depth := 0
	for _, t := range toks {
		if msg, ok := lexicalErrors[t.Type]; ok {
			return nil, errorAt(t.Pos, msg)
		}
		if t.Type == tokInvalid {
			return nil, errorAt(t.Pos, invalidCharMessage(t.Value))
		}
		switch {
		case isPunct(&t, "("):
			if depth++; depth > maxDepth {
				return nil, errorAt(t.Pos, "parentheses nested too deeply")
			}
		case isPunct(&t, ")"):
			depth--
		}
	}
	return lexer.Upgrade(&sliceLexer{toks: toks}, tokHint)
}

// lexAll returns all tokens of src, keywords retyped, with a final EOF token.
func lexAll(src string) ([]lexer.Token, error) {
	l, err := sqlLexer.LexString("", src)
	if err != nil {
		return nil, err
	}
	var toks []lexer.Token
	end := lexer.Position{Line: 1, Column: 1}
	for {
		t, err := l.Next()
		if err != nil {
			return nil, err
		}
		if t.EOF() {
			t.Pos = end
			return append(toks, t), nil
		}
		if t.Type == tokIdent && isReserved(t.Value) {
			t.Type = tokKeyword
		}
		toks = append(toks, t)
		end = t.Pos
		end.Advance(t.Value)
	}
}

func invalidCharMessage(c string) string {
	switch c {
	case `"`:
		return `unexpected character '"': write strings as '...' and quoted identifiers as ` + "`...`"
	case "!":
		return `unexpected character "!", did you mean "!=" or NOT?`
	}
	return "unexpected character " + strconv.Quote(c)
}

// sliceLexer replays a token slice; it lets tokenize check tokens before parsing.
type sliceLexer struct{ toks []lexer.Token }

func (s *sliceLexer) Next() (lexer.Token, error) {
	t := s.toks[0]
	if len(s.toks) > 1 {
		s.toks = s.toks[1:]
	}
	return t, nil
}

// Complete reports whether text holds at least one whole statement: it ends with ';'
// outside quotes and comments (trailing whitespace and comments ignored). The REPL uses it
// to decide whether to read another line.
func Complete(text string) bool {
	toks, err := lexAll(text)
	if err != nil || len(toks) < 2 {
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
