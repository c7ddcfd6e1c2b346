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
	"TINYINT": "TINYINT", "SMALLINT": "SMALLINT",
	"INT": "INT", "INTEGER": "INT",
	"BIGINT": "BIGINT",
	"FLOAT":  "FLOAT", "REAL": "FLOAT",
	"DOUBLE":  "DOUBLE",
	"DECIMAL": "DECIMAL", "DEC": "DECIMAL", "NUMERIC": "DECIMAL",
	"STRING":  "STRING",
	"VARCHAR": "VARCHAR", "CHAR": "CHAR",
	"BYTES": "BYTES", "BINARY": "BINARY", "VARBINARY": "VARBINARY",
	"TIMESTAMP":     "TIMESTAMP",
	"TIMESTAMP_LTZ": "TIMESTAMP_LTZ",
	"DATE":          "DATE",
	"TIME":          "TIME",
	"ROW":           "ROW", "ARRAY": "ARRAY", "MAP": "MAP", "MULTISET": "MULTISET",
}

// typeList names the supported types in error messages.
var typeList = []string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
	"DECIMAL", "STRING", "VARCHAR", "CHAR", "BYTES", "BINARY", "VARBINARY", "TIMESTAMP",
	"TIMESTAMP_LTZ", "DATE", "TIME", "ROW", "ARRAY", "MAP", "MULTISET"}

// maxTypeParams is how many (p, s) parameters a type takes.
var maxTypeParams = map[string]int{"DECIMAL": 2, "VARCHAR": 1, "CHAR": 1, "BINARY": 1,
	"VARBINARY": 1, "TIMESTAMP": 1, "TIMESTAMP_LTZ": 1, "TIME": 1}

// maxTypeDepth bounds the nesting of structured types, so that no input can exhaust the
// stack.
const maxTypeDepth = 100

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

// parseType parses `name [(p[, s])] [WITH LOCAL TIME ZONE] [NOT NULL]`, the structured
// types ROW<name T, ...> (or ROW(name T, ...)), ARRAY<T>, MAP<K, V>, MULTISET<T>, and the
// postfix forms `T ARRAY` and `T MULTISET`, normalising the name (INTEGER -> INT, REAL ->
// FLOAT, T ARRAY -> ARRAY<T>, TIMESTAMP WITH LOCAL TIME ZONE -> TIMESTAMP_LTZ, ...). It returns nil, nil if
// no type starts at the current token.
func parseType(lex *lexer.PeekingLexer) (*TypeName, error) {
	p := &exprParser{lex: lex}
	if !isName(p.peek()) {
		return nil, nil
	}
	return p.typeName(0)
}

func (p *exprParser) typeName(depth int) (*TypeName, error) {
	t := p.peek()
	if depth > maxTypeDepth {
		return nil, errorAt(t.Pos, "type nested too deeply")
	}
	if !isName(t) {
		return nil, unexpected(t, "type")
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
	if name == "ROW" || name == "ARRAY" || name == "MAP" || name == "MULTISET" {
		if err := p.typeArgs(typ, depth); err != nil {
			return nil, err
		}
	} else if isPunct(p.peek(), "(") {
		params, err := p.typeParams(name)
		if err != nil {
			return nil, err
		}
		typ.Params = params
	}
	if name == "TIMESTAMP" || name == "TIME" {
		if err := p.timeZone(typ); err != nil {
			return nil, err
		}
	}
	p.nullability(typ)
	// INT ARRAY [NOT NULL] is ARRAY<INT>, INT MULTISET MULTISET<INT>.
	for isWord(p.peek(), "ARRAY") || isWord(p.peek(), "MULTISET") {
		name := strings.ToUpper(p.next().Value)
		typ = &TypeName{Pos: typ.Pos, Name: name, Elem: typ}
		p.nullability(typ)
	}
	return typ, nil
}

// nullability reads an optional NOT NULL or NULL into typ.
func (p *exprParser) nullability(typ *TypeName) {
	switch t := p.peek(); {
	case isKeyword(t, "NOT") && isKeyword(p.peekAt(1), "NULL"):
		p.next()
		p.next()
		typ.NotNull = true
	case isKeyword(t, "NULL"):
		p.next()
	}
}

// typeArgs parses the <...> of ROW, ARRAY, MAP and MULTISET (ROW also takes (...)).
func (p *exprParser) typeArgs(typ *TypeName, depth int) error {
	open := p.peek()
	closer := ">"
	switch {
	case isPunct(open, "<"):
	case isPunct(open, "(") && typ.Name == "ROW":
		closer = ")"
	case isPunct(open, "<>") && typ.Name == "ROW": // ROW<>: no fields
		p.next()
		return nil
	default:
		if typ.Name == "ROW" {
			return unexpected(open, "'<'", "'('")
		}
		return unexpected(open, "'<'")
	}
	p.next()
	if typ.Name == "ROW" {
		if isPunct(p.peek(), closer) {
			p.next()
			return nil
		}
		for {
			f := p.peek()
			if !isName(f) {
				return unexpected(f, "field name")
			}
			p.next()
			ft, err := p.typeName(depth + 1)
			if err != nil {
				return err
			}
			field := &RowField{Pos: f.Pos, Name: identText(f), Type: ft}
			if s := p.peek(); s.Type == tokString { // a field's description is dropped
				p.next()
			}
			typ.Fields = append(typ.Fields, field)
			if t := p.next(); !isPunct(t, ",") {
				if isPunct(t, closer) {
					return nil
				}
				return unexpected(t, show(closer), "','")
			}
		}
	}
	elem, err := p.typeName(depth + 1)
	if err != nil {
		return err
	}
	typ.Elem = elem
	if typ.Name == "MAP" {
		if err := p.expect(","); err != nil {
			return err
		}
		if typ.Value, err = p.typeName(depth + 1); err != nil {
			return err
		}
	}
	return p.expect(">")
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
// WITHOUT TIME ZONE after TIMESTAMP[(p)], and WITHOUT TIME ZONE after TIME[(p)].
func (p *exprParser) timeZone(typ *TypeName) error {
	var words []string
	switch t := p.peek(); {
	case typ.Name == "TIMESTAMP" && isWord(t, "WITH") && isWord(p.peekAt(1), "LOCAL"):
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
