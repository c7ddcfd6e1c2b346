// Package parser turns Flink SQL text into an abstract syntax tree, and back. Its one job:
// Parse reads a script of statements (ParseExpr a single expression) into the AST of
// ast.go, every node carrying its line and column; a syntax error is an *Error that gives
// the line and column, says what was unexpected and what was expected in user words
// (`2:15: unexpected "FORM", expected FROM`) and quotes the line with a caret; and every
// node's String method prints canonical SQL that parses back to the same tree. Complete
// tells the REPL whether a statement has been fully typed. The grammar is participle
// structs (grammar.go, query.go) converted into the AST, with hand-written precedence
// climbing for expressions (expr.go, funcs.go) and types (types.go); the parser knows no
// catalog and imports nothing else of streamsql.
package parser
