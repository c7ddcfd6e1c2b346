package parser

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// canonicalTypes maps each accepted type name to TypeName.Name.
var canonicalTypes = map[string]string{
	"BOOLEAN": "BOOLEAN",
	"INT":     "INT", "INTEGER": "INT",
	"BIGINT": "BIGINT",
	"DOUBLE": "DOUBLE", "FLOAT": "DOUBLE",
	"DECIMAL": "DECIMAL", "DEC": "DECIMAL", "NUMERIC": "DECIMAL",
	"STRING":  "STRING",
	"VARCHAR": "VARCHAR", "CHAR": "VARCHAR",
	"TIMESTAMP":     "TIMESTAMP",
	"TIMESTAMP_LTZ": "TIMESTAMP_LTZ",
	"DATE":          "DATE",
}

// typeList names the supported types in error messages.
var typeList = []string{"BOOLEAN", "INT", "BIGINT", "DOUBLE", "DECIMAL", "STRING", "VARCHAR",
	"CHAR", "TIMESTAMP", "TIMESTAMP_LTZ", "DATE"}

// maxTypeParams is how many (p, s) parameters a type takes.
var maxTypeParams = map[string]int{"DECIMAL": 2, "VARCHAR": 1, "TIMESTAMP": 1, "TIMESTAMP_LTZ": 1}

// typeG is a type in the grammar (a column's type): participle calls its Parse.
type typeG struct {
	T *TypeName
}

// Parse implements participle.Parseable.
func (g *typeG) Parse(lex *lexer.PeekingLexer) error {
	t, err := parseType(lex)
	if err != nil {
		return err
	}
	if t == nil {
		return participle.NextMatch
	}
	g.T = t
	return nil
}

// parseType parses `name [(p[, s])] [WITH LOCAL TIME ZONE] [NOT NULL]`, normalising the
// name (INTEGER -> INT, CHAR -> VARCHAR, TIMESTAMP WITH LOCAL TIME ZONE -> TIMESTAMP_LTZ, ...).
// It returns nil, nil if no type starts at the current token.
func parseType(lex *lexer.PeekingLexer) (*TypeName, error) {
	p := &exprParser{lex: lex}
	t := p.peek()
	if !isName(t) {
		return nil, nil
	}
	name, ok := canonicalTypes[strings.ToUpper(t.Value)]
	if !ok || t.Type != tokIdent {
		return nil, errorAt(t.Pos, "unknown type "+describe(t)+", expected "+oneOf(typeList))
	}
	p.next()
	typ := &TypeName{Pos: t.Pos, Name: name}
	if name == "DOUBLE" && isWord(p.peek(), "PRECISION") {
		p.next()
	}
	if isPunct(p.peek(), "(") {
		params, err := p.typeParams(name)
		if err != nil {
			return nil, err
		}
		typ.Params = params
	}
	if name == "TIMESTAMP" {
		if err := p.timeZone(typ); err != nil {
			return nil, err
		}
	}
	switch t := p.peek(); {
	case isKeyword(t, "NOT") && isKeyword(p.peekAt(1), "NULL"):
		p.next()
		p.next()
		typ.NotNull = true
	case isKeyword(t, "NULL"):
		p.next()
	}
	return typ, nil
}

// typeParams parses the (p[, s]) of a type.
func (p *exprParser) typeParams(name string) ([]int, error) {
	open := p.next()
	max := maxTypeParams[name]
	if max == 0 {
		return nil, errorAt(open.Pos, "type "+name+" takes no parameters")
	}
	var params []int
	for {
		t := p.peek()
		n, err := strconv.ParseUint(t.Value, 10, 31)
		if t.Type != tokNumber || err != nil {
			if t.Type == tokNumber {
				return nil, errorAt(t.Pos, "invalid type parameter "+describe(t))
			}
			return nil, unexpected(t, "integer")
		}
		p.next()
		params = append(params, int(n))
		if len(params) == max {
			return params, p.expect(")")
		}
		if t := p.next(); !isPunct(t, ",") {
			if isPunct(t, ")") {
				return params, nil
			}
			return nil, unexpected(t, "')'", "','")
		}
	}
}

// timeZone parses the optional WITH LOCAL TIME ZONE (making typ a TIMESTAMP_LTZ) or
// WITHOUT TIME ZONE after TIMESTAMP[(p)].
func (p *exprParser) timeZone(typ *TypeName) error {
	var words []string
	switch t := p.peek(); {
	case isWord(t, "WITH") && isWord(p.peekAt(1), "LOCAL"):
		typ.Name = "TIMESTAMP_LTZ"
		words = []string{"WITH", "LOCAL", "TIME", "ZONE"}
	case isWord(t, "WITHOUT") && isWord(p.peekAt(1), "TIME"):
		words = []string{"WITHOUT", "TIME", "ZONE"}
	}
	for _, w := range words {
		if err := p.expect(w); err != nil {
			return err
		}
	}
	return nil
}
