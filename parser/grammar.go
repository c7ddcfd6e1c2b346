package parser

import (
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// stmtParser parses one statement. The grammar is the unexported *G structs below and in
// query.go, each converted to the AST by its toAST method. Expressions and types are parsed
// by hand (expr.go, types.go) and plugged in: participle calls parseExpr for every Expr
// field and typeG.Parse for every type.
//
// Lookahead is 0: once an alternative has consumed a token it is committed, so that an error
// after a separator ("SELECT a, FROM t") is reported where it is rather than where the
// parser last had a choice. The few places that need more lookahead say so with (?= ...).
var stmtParser = participle.MustBuild[stmtRoot](append(grammarOptions,
	participle.Union[stmtG](&queryStmtG{}, &insertG{}, &createG{}, &dropG{}, &setG{},
		&explainG{}, &showTablesG{}, &describeG{}, &stopJobG{}, &useG{}, &resetG{},
		&executeSetG{}, &beginSetG{}, &endG{}))...)

// queryParser parses a query where hand-written grammar needs one: a window function's
// data, TUMBLE((SELECT ...), ...).
var queryParser = participle.MustBuild[queryExprG](grammarOptions...)

// parseSubquery parses a query inside an expression: IN (SELECT ...), EXISTS (...), a
// scalar (SELECT ...). It is set in init because the query grammar's own expressions
// reach it, which a package variable's initializer cannot refer back to.
var parseSubquery func(lex *lexer.PeekingLexer) (*queryExprG, error)

func init() {
	parseSubquery = func(lex *lexer.PeekingLexer) (*queryExprG, error) {
		return queryParser.ParseFromLexer(lex, participle.AllowTrailing(true))
	}
}

var grammarOptions = []participle.Option{
	participle.Lexer(sqlLexer),
	participle.CaseInsensitive("Keyword", "Ident"),
	participle.ParseTypeWith(parseExpr),
	participle.UseLookahead(0),
}

// stmtRoot is the grammar's root: one statement, without its ';'.
type stmtRoot struct {
	Stmt stmtG `parser:"@@"`
}

// stmtG is a statement as the grammar reads it.
type stmtG interface {
	toAST() (Stmt, error)
}

// identG is an identifier, `quoted` or not; Name is unquoted.
type identG struct {
	Pos  Pos
	Name string
}

// Parse implements participle.Parseable.
func (g *identG) Parse(lex *lexer.PeekingLexer) error {
	t := lex.Peek()
	switch t.Type {
	case tokIdent:
		g.Name = t.Value
	case tokQuotedIdent:
		g.Name = unquoteIdent(t.Value)
	default:
		return participle.NextMatch
	}
	g.Pos = t.Pos
	lex.Next()
	return nil
}

func names(ids []identG) []string {
	if ids == nil {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Name
	}
	return out
}

// listEnd is the ')' that closes a parenthesised list. It is a production of its own only
// so that an error there says "expected ')' or ','" rather than just "expected ')'".
type listEnd struct {
	Paren bool `parser:"@')'"`
}

// elementsEnd is the ')' that closes the column list of CREATE TABLE (see listEnd).
type elementsEnd struct {
	Paren bool `parser:"@')'"`
}

// watermarkFor and primaryKey match the words that start a WATERMARK or PRIMARY KEY clause
// of CREATE TABLE, and nothing otherwise, so that a column may be named watermark or
// primary: the grammar cannot look two tokens ahead without losing its error messages.
type (
	watermarkFor struct{}
	primaryKey   struct{}
)

// Parse implements participle.Parseable.
func (*watermarkFor) Parse(lex *lexer.PeekingLexer) error {
	return matchWords(lex, "WATERMARK", "FOR")
}

// Parse implements participle.Parseable.
func (*primaryKey) Parse(lex *lexer.PeekingLexer) error { return matchWords(lex, "PRIMARY", "KEY") }

// matchWords consumes the given keywords if they come next, in order.
func matchWords(lex *lexer.PeekingLexer, words ...string) error {
	cp := lex.MakeCheckpoint()
	for _, w := range words {
		if t := lex.Next(); !isWord(t, w) && !isKeyword(t, w) {
			lex.LoadCheckpoint(cp)
			return participle.NextMatch
		}
	}
	return nil
}

// setG is SET 'key' = 'value', or SET dotted.key-name = value; SET alone lists the
// settings.
type setG struct {
	Pos       Pos
	QuotedKey string `parser:"'SET' ( ( @String"`
	Key       string `parser:"        | @(Ident | Keyword) ( @('.' | '-') @(Ident | Keyword | Number) )* )"`
	QuotedVal string `parser:"  '=' ( @String"`
	Value     string `parser:"      | @(Ident | Keyword | Number) ) )?"`
}

// resetG is RESET 'key', or RESET alone for every key.
type resetG struct {
	Pos Pos
	Key string `parser:"'RESET' @String?"`
}

func (g *resetG) toAST() (Stmt, error) {
	if g.Key == "" {
		return &ResetStmt{Pos: g.Pos}, nil
	}
	return &ResetStmt{Pos: g.Pos, Key: unquoteString(g.Key)}, nil
}

// useG is USE [CATALOG] name, the name possibly catalog.database.
type useG struct {
	Pos     Pos
	Catalog bool     `parser:"'USE' ( @'CATALOG' (?= Ident | QuotedIdent) )?"`
	Name    []identG `parser:"@@ ( '.' @@ )*"`
}

func (g *useG) toAST() (Stmt, error) {
	if g.Catalog && len(g.Name) > 1 {
		return nil, errorAt(g.Name[1].Pos, "USE CATALOG takes a catalog name, not a path")
	}
	return &UseStmt{Pos: g.Pos, Catalog: g.Catalog, Name: names(g.Name)}, nil
}

// createFunctionG is [IF NOT EXISTS] name AS 'class' [LANGUAGE lang], after CREATE
// [TEMPORARY [SYSTEM]] FUNCTION.
type createFunctionG struct {
	IfNotExists bool     `parser:"@( (?= 'IF' 'NOT') 'IF' 'NOT' 'EXISTS' )?"`
	Name        []identG `parser:"@@ ( '.' @@ )*"`
	Class       string   `parser:"'AS' @String"`
	Language    string   `parser:"( 'LANGUAGE' @Ident )?"`
}

func (g *setG) toAST() (Stmt, error) {
	s := &SetStmt{Pos: g.Pos, Key: g.Key, Value: g.Value}
	if g.QuotedKey != "" {
		s.Key = unquoteString(g.QuotedKey)
	}
	if g.QuotedVal != "" {
		s.Value = unquoteString(g.QuotedVal)
	}
	return s, nil
}

// createG is CREATE [TEMPORARY] TABLE ... or CREATE [TEMPORARY] VIEW ....
type createG struct {
	Pos       Pos
	OrReplace bool             `parser:"'CREATE' @( 'OR' 'REPLACE' )?"`
	Temporary bool             `parser:"@'TEMPORARY'?"`
	Table     *createTableG    `parser:"( 'TABLE' @@"`
	View      *createViewG     `parser:"| 'VIEW' @@"`
	System    bool             `parser:"| ( @'SYSTEM' 'FUNCTION' | 'FUNCTION' )"`
	Function  *createFunctionG `parser:"  @@ )"`
}

type createTableG struct {
	IfNotExists bool             `parser:"@( (?= 'IF' 'NOT') 'IF' 'NOT' 'EXISTS' )?"` // a table may be named `if`
	Name        identG           `parser:"@@"`
	Elements    []*tableElementG `parser:"( '(' @@ ( ',' @@ )*"`
	End         *elementsEnd     `parser:"  @@ )?"`
	Comment     string           `parser:"( 'COMMENT' @String )?"`
	Partitioned *partitionedByG  `parser:"@@?"`
	Options     []*optionG       `parser:"( 'WITH' '(' @@ ( ',' @@ )*"`
	OptionsEnd  *listEnd         `parser:"  @@ )?"`
	Like        *likeG           `parser:"( 'LIKE' @@ )?"`
	Query       *queryExprG      `parser:"( 'AS' @@ )?"`
}

// partitionedByG is CREATE TABLE's PARTITIONED BY (column, ...). PARTITIONED is not a
// keyword of the lexer, so the clause is matched by its words (see matchWords).
type partitionedByG struct {
	Pos     Pos
	Start   partitionedBy `parser:"@@"`
	Columns []identG      `parser:"'(' @@ ( ',' @@ )*"`
	End     listEnd       `parser:"@@"`
}

// partitionedBy matches the words PARTITIONED BY.
type partitionedBy struct{}

// Parse implements participle.Parseable.
func (*partitionedBy) Parse(lex *lexer.PeekingLexer) error {
	return matchWords(lex, "PARTITIONED", "BY")
}

// likeG is the LIKE clause of CREATE TABLE: the table to start from and how to merge
// each of its features, Flink's like options (INCLUDING ALL, EXCLUDING OPTIONS, ...).
type likeG struct {
	Pos        Pos
	Table      identG         `parser:"@@"`
	Options    []*likeOptionG `parser:"( '(' @@+"`
	OptionsEnd *listEnd       `parser:"  @@ )?"`
}

type likeOptionG struct {
	Pos     Pos
	Mode    string `parser:"@( 'INCLUDING' | 'EXCLUDING' | 'OVERWRITING' )"`
	Feature string `parser:"@( 'ALL' | 'CONSTRAINTS' | 'PARTITIONS' | 'GENERATED' | 'OPTIONS' | 'WATERMARKS' | 'METADATA' )"`
}

// tableElementG is one item between the parentheses of CREATE TABLE, in any order.
type tableElementG struct {
	Watermark  *watermarkG  `parser:"  @@"`
	PrimaryKey *primaryKeyG `parser:"| @@"`
	Column     *columnG     `parser:"| @@"`
}

// columnG is `name type [PRIMARY KEY NOT ENFORCED] [COMMENT '...']` or
// `name AS expr [COMMENT '...']`. Comments are dropped.
type columnG struct {
	Pos        Pos
	Name       identG     `parser:"@@"`
	Computed   Expr       `parser:"( 'AS' @@"`
	Type       *typeG     `parser:"| @@ )"`
	Metadata   *metadataG `parser:"@@?"`
	PrimaryKey bool       `parser:"( @('PRIMARY' 'KEY') 'NOT' 'ENFORCED' )?"`
	Comment    string     `parser:"( 'COMMENT' @String )?"`
}

// metadataG is a metadata column's METADATA [FROM 'key'] [VIRTUAL].
type metadataG struct {
	Pos     Pos
	Start   bool    `parser:"@'METADATA'"`
	From    *string `parser:"( 'FROM' @String )?"`
	Virtual bool    `parser:"@'VIRTUAL'?"`
}

type watermarkG struct {
	Pos    Pos
	Start  watermarkFor `parser:"@@"`
	Column identG       `parser:"@@"`
	Expr   Expr         `parser:"'AS' @@"`
}

type primaryKeyG struct {
	Pos     Pos
	Start   primaryKey `parser:"@@"`
	Columns []identG   `parser:"'(' @@ ( ',' @@ )*"`
	End     listEnd    `parser:"@@ 'NOT' 'ENFORCED'"`
}

type optionG struct {
	Pos   Pos
	Key   string `parser:"@String"`
	Value string `parser:"'=' @String"`
}

func (g *createG) toAST() (Stmt, error) {
	if g.OrReplace && g.Table == nil {
		return nil, errorAt(g.Pos, "CREATE OR REPLACE applies to TABLE ... AS SELECT only")
	}
	if f := g.Function; f != nil {
		return &CreateFunctionStmt{Pos: g.Pos, Temporary: g.Temporary, System: g.System, IfNotExists: f.IfNotExists,
			Name: names(f.Name), Class: unquoteString(f.Class), Language: strings.ToUpper(f.Language)}, nil
	}
	if g.View != nil {
		q, err := g.View.Query.toAST()
		if err != nil {
			return nil, err
		}
		return &CreateViewStmt{Pos: g.Pos, Temporary: g.Temporary,
			IfNotExists: g.View.IfNotExists, Name: g.View.Name.Name,
			Columns: names(g.View.Columns), Query: q}, nil
	}
	t := g.Table
	s := &CreateTableStmt{Pos: g.Pos, OrReplace: g.OrReplace, Temporary: g.Temporary, IfNotExists: t.IfNotExists,
		Name: t.Name.Name}
	switch {
	case t.End == nil && t.Like == nil && t.Query == nil:
		return nil, errorAt(t.Name.Pos, "CREATE TABLE needs its columns in parentheses, a LIKE clause or AS SELECT")
	case t.Like != nil && t.Query != nil:
		return nil, errorAt(t.Like.Pos, "CREATE TABLE takes LIKE or AS SELECT, not both")
	case g.OrReplace && t.Query == nil:
		return nil, errorAt(g.Pos, "CREATE OR REPLACE TABLE needs AS SELECT: a table is replaced by a query's result")
	case g.OrReplace && t.IfNotExists:
		return nil, errorAt(g.Pos, "CREATE OR REPLACE TABLE cannot have IF NOT EXISTS")
	}
	if pb := t.Partitioned; pb != nil {
		s.PartitionedBy = names(pb.Columns)
		for i, c := range pb.Columns {
			for _, d := range pb.Columns[:i] {
				if strings.EqualFold(c.Name, d.Name) {
					return nil, errorAt(c.Pos, "PARTITIONED BY names column `"+c.Name+"` twice")
				}
			}
		}
	}
	if t.Like != nil {
		s.Like = &LikeClause{Pos: t.Like.Pos, Table: t.Like.Table.Name}
		for _, o := range t.Like.Options {
			s.Like.Options = append(s.Like.Options, LikeOption{Pos: o.Pos, Mode: strings.ToUpper(o.Mode), Feature: strings.ToUpper(o.Feature)})
		}
	}
	if t.Query != nil {
		q, err := t.Query.toAST()
		if err != nil {
			return nil, err
		}
		s.Query = q
	}
	for _, el := range t.Elements {
		switch {
		case el.Watermark != nil:
			if s.Watermark != nil {
				return nil, errorAt(el.Watermark.Pos, "a table can have only one WATERMARK")
			}
			s.Watermark = &WatermarkDef{Pos: el.Watermark.Pos, Column: el.Watermark.Column.Name,
				Expr: el.Watermark.Expr}
		case el.PrimaryKey != nil:
			if s.PrimaryKey != nil {
				return nil, errorAt(el.PrimaryKey.Pos, "a table can have only one PRIMARY KEY")
			}
			s.PrimaryKey = names(el.PrimaryKey.Columns)
		default:
			c := el.Column
			def := &ColumnDef{Pos: c.Pos, Name: c.Name.Name, Computed: c.Computed}
			if c.Type != nil {
				def.Type = c.Type.T
			}
			if m := c.Metadata; m != nil {
				if c.Type == nil {
					return nil, errorAt(m.Pos, "a computed column cannot be a METADATA column")
				}
				def.Metadata, def.Virtual = true, m.Virtual
				if m.From != nil {
					def.MetadataKey = unquoteString(*m.From)
				}
			}
			s.Columns = append(s.Columns, def)
			if c.PrimaryKey {
				if s.PrimaryKey != nil {
					return nil, errorAt(c.Pos, "a table can have only one PRIMARY KEY")
				}
				s.PrimaryKey = []string{c.Name.Name}
			}
		}
	}
	for _, o := range t.Options {
		s.Options = append(s.Options, &Option{Pos: o.Pos, Key: unquoteString(o.Key),
			Value: unquoteString(o.Value)})
	}
	return s, nil
}

type createViewG struct {
	IfNotExists bool        `parser:"@( (?= 'IF' 'NOT') 'IF' 'NOT' 'EXISTS' )?"`
	Name        identG      `parser:"@@"`
	Columns     []identG    `parser:"( '(' @@ ( ',' @@ )*"`
	ColumnsEnd  *listEnd    `parser:"  @@ )?"`
	Query       *queryExprG `parser:"'AS' @@"`
}

// dropG is DROP [TEMPORARY] TABLE|VIEW [IF EXISTS] name.
type dropG struct {
	Pos       Pos
	Temporary bool   `parser:"'DROP' @'TEMPORARY'?"`
	View      bool   `parser:"( 'TABLE' | @'VIEW' )"`
	IfExists  bool   `parser:"@( (?= 'IF' 'EXISTS') 'IF' 'EXISTS' )?"`
	Name      identG `parser:"@@"`
}

func (g *dropG) toAST() (Stmt, error) {
	return &DropStmt{Pos: g.Pos, View: g.View, Temporary: g.Temporary, IfExists: g.IfExists,
		Name: g.Name.Name}, nil
}

// insertG is INSERT INTO table [(columns)] query. The column list looks ahead for an
// identifier, so that INSERT INTO t (SELECT ...) reads a parenthesised query.
type insertG struct {
	Pos        Pos
	Table      identG      `parser:"'INSERT' 'INTO' @@"`
	Hints      *hintsG     `parser:"@@?"`
	Columns    []identG    `parser:"( (?= '(' (Ident | QuotedIdent)) '(' @@ ( ',' @@ )*"`
	ColumnsEnd *listEnd    `parser:"  @@ )?"`
	Query      *queryExprG `parser:"@@"`
}

func (g *insertG) toAST() (Stmt, error) {
	q, err := g.Query.toAST()
	if err != nil {
		return nil, err
	}
	hints, err := hintList(g.Hints)
	if err != nil {
		return nil, err
	}
	return &InsertStmt{Pos: g.Pos, Table: g.Table.Name, Hints: hints, Columns: names(g.Columns), Query: q}, nil
}

// explainG is EXPLAIN [PLAN FOR] followed by an INSERT or a query.
type explainG struct {
	Pos     Pos
	Details []string     `parser:"'EXPLAIN' ( 'PLAN' 'FOR' | @( 'ESTIMATED_COST' | 'CHANGELOG_MODE' | 'PLAN_ADVICE' | 'JSON_EXECUTION_PLAN' ) ( ',' @( 'ESTIMATED_COST' | 'CHANGELOG_MODE' | 'PLAN_ADVICE' | 'JSON_EXECUTION_PLAN' ) )* )?"`
	Insert  *insertG     `parser:"( @@"`
	Query   *queryStmtG  `parser:"| @@"`
	Set     *explainSetG `parser:"| @@ )"`
}

func (g *explainG) toAST() (Stmt, error) {
	var (
		s   Stmt
		err error
	)
	switch {
	case g.Set != nil:
		s, err = g.Set.Body.toAST()
	case g.Insert != nil:
		s, err = g.Insert.toAST()
	default:
		s, err = g.Query.toAST()
	}
	if err != nil {
		return nil, err
	}
	details := make([]string, len(g.Details))
	for i, d := range g.Details {
		details[i] = strings.ToUpper(d)
	}
	return &ExplainStmt{Pos: g.Pos, Details: details, Stmt: s}, nil
}

// showTablesG is every SHOW statement.
type showTablesG struct {
	Pos        Pos
	What       string  `parser:"'SHOW' ( @( 'TABLES' | 'VIEWS' | 'FUNCTIONS' | 'CHECKPOINTS' | 'JOBS' | 'CATALOGS' | 'DATABASES' )"`
	User       bool    `parser:"       | @'USER' 'FUNCTIONS'"`
	Current    string  `parser:"       | 'CURRENT' @( 'CATALOG' | 'DATABASE' )"`
	Columns    *identG `parser:"       | 'COLUMNS' ( 'FROM' | 'IN' ) @@"`
	Create     string  `parser:"       | 'CREATE' @( 'TABLE' | 'VIEW' )"`
	CreateName *identG `parser:"         @@ )"`
}

func (g *showTablesG) toAST() (Stmt, error) {
	switch {
	case g.Current != "":
		return &ShowStmt{Pos: g.Pos, What: "CURRENT " + strings.ToUpper(g.Current)}, nil
	case g.Columns != nil:
		return &ShowColumnsStmt{Pos: g.Pos, Table: g.Columns.Name}, nil
	case g.Create != "":
		return &ShowCreateStmt{Pos: g.Pos, View: strings.EqualFold(g.Create, "VIEW"), Name: g.CreateName.Name}, nil
	}
	if g.User {
		return &ShowStmt{Pos: g.Pos, What: "USER FUNCTIONS"}, nil
	}
	switch strings.ToUpper(g.What) {
	case "CATALOGS", "DATABASES", "VIEWS", "FUNCTIONS":
		return &ShowStmt{Pos: g.Pos, What: strings.ToUpper(g.What)}, nil
	case "CHECKPOINTS":
		return &ShowCheckpointsStmt{Pos: g.Pos}, nil
	case "JOBS":
		return &ShowJobsStmt{Pos: g.Pos}, nil
	}
	return &ShowTablesStmt{Pos: g.Pos}, nil
}

// stopJobG is Flink's STOP JOB 'name' [WITH SAVEPOINT] [WITH DRAIN].
type stopJobG struct {
	Pos   Pos
	Name  string   `parser:"'STOP' 'JOB' @String"`
	Withs []string `parser:"( 'WITH' @( 'SAVEPOINT' | 'DRAIN' ) )*"`
}

func (g *stopJobG) toAST() (Stmt, error) {
	s := &StopJobStmt{Pos: g.Pos, Name: unquoteString(g.Name)}
	for _, w := range g.Withs {
		if strings.EqualFold(w, "SAVEPOINT") {
			s.Savepoint = true
		} else {
			s.Drain = true
		}
	}
	return s, nil
}

// describeG is DESCRIBE t, or DESCRIBE JOB 'name' (a job's running operator graph).
type describeG struct {
	Pos  Pos
	Job  *string `parser:"( 'DESCRIBE' | 'DESC' ) ( (?= 'JOB' String) 'JOB' @String"`
	Name identG  `parser:"| @@ )"`
}

func (g *describeG) toAST() (Stmt, error) {
	if g.Job != nil {
		return &DescribeJobStmt{Pos: g.Pos, Name: unquoteString(*g.Job)}, nil
	}
	return &DescribeStmt{Pos: g.Pos, Name: g.Name.Name}, nil
}
