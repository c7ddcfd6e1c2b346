package parser

import (
	"fmt"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// statementKeywords are what a statement can start with, for error messages.
var statementKeywords = []string{"SELECT", "INSERT", "CREATE", "DROP", "SET", "EXPLAIN",
	"SHOW", "DESCRIBE", "'('"}

// clauseKeywords are keywords that may follow a complete statement's last token: a word
// there that is not one of them may be a misspelling of one ("SELECT a FORM t").
var clauseKeywords = []string{"FROM", "WHERE", "GROUP", "HAVING", "WITH", "COMMENT", "SELECT",
	"ORDER", "LIMIT", "UNION", "JOIN"}

// Parse parses a script of statements separated by ';' (the last ';' optional). A script
// with no statements (empty, or only comments) is valid. Errors are *Error.
func Parse(sql string) (script *Script, err error) {
	defer func() {
		if r := recover(); r != nil {
			script, err = nil, internalError(sql, r)
		}
	}()
	lex, err := tokenize(sql)
	if err != nil {
		return nil, withSource(err, sql)
	}
	script = &Script{}
	for !lex.Peek().EOF() {
		start := lex.MakeCheckpoint()
		root, err := stmtParser.ParseFromLexer(lex, participle.AllowTrailing(true))
		if err != nil {
			return nil, withSource(fromParticiple(err, statementKeywords), sql)
		}
		stmt, err := root.Stmt.toAST()
		if err != nil {
			return nil, withSource(err, sql)
		}
		script.Stmts = append(script.Stmts, stmt)
		switch t := lex.Peek(); {
		case isPunct(t, ";"):
			lex.Next()
		case !t.EOF():
			return nil, withSource(afterStatement(lex, start), sql)
		}
	}
	return script, nil
}

// afterStatement reports the token that follows a complete statement (started at checkpoint
// start) where ';' or the end was expected. If that token, or the one before it (which the
// grammar may have read as an alias), looks like a misspelt keyword, it says so.
func afterStatement(lex *lexer.PeekingLexer, start lexer.Checkpoint) *Error {
	bad := lex.Peek()
	if kw := nearMiss(bad, clauseKeywords); kw != "" {
		return unexpected(bad, kw)
	}
	if end := lex.RawCursor(); end > start.RawCursor() {
		prev := &lex.Range(end-1, end)[0]
		if kw := nearMiss(prev, clauseKeywords); kw != "" {
			return unexpected(prev, kw)
		}
	}
	return unexpected(bad, "';'")
}

// ParseExpr parses one scalar expression. Errors are *Error.
func ParseExpr(s string) (e Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, internalError(s, r)
		}
	}()
	lex, err := tokenize(s)
	if err != nil {
		return nil, withSource(err, s)
	}
	p := &exprParser{lex: lex}
	if !p.startsExpr() {
		return nil, withSource(unexpected(lex.Peek(), "expression"), s)
	}
	if e, err = p.expr(precOr); err != nil {
		return nil, withSource(err, s)
	}
	if t := lex.Peek(); !t.EOF() {
		return nil, withSource(unexpected(t, "end of input"), s)
	}
	return e, nil
}

// internalError turns a recovered panic (a bug in the parser or in participle) into an
// *Error, so that no input can crash the caller. It is a last resort: tests fuzz for it.
func internalError(src string, r any) *Error {
	return withSource(errorAt(Pos{Line: 1, Column: 1}, fmt.Sprintf("internal parser error: %v", r)), src)
}
