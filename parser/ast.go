package parser

import "github.com/alecthomas/participle/v2/lexer"

// Normalisation. The parser keeps what the planner needs and drops spelling:
//
//   - Keywords, type names, function names, interval and EXTRACT units and operators are upper
//     case. Identifiers keep their case as written; a `quoted` identifier is stored unquoted
//     and verbatim (a doubled backtick inside stands for one). String literals are stored
//     unquoted ('' is ').
//   - Parentheses leave no node. A NumberLit is never negative: -1 is UnaryExpr{"-", 1}.
//   - != is <>. SELECT ALL is SELECT. An alias without AS is the same as with AS.
//   - Types: INTEGER is INT; REAL is FLOAT; DOUBLE PRECISION is DOUBLE; DEC and NUMERIC are
//     DECIMAL; T ARRAY is ARRAY<T>; ROW(...) is ROW<...> (field descriptions are dropped);
//     TIMESTAMP(p) WITH LOCAL TIME ZONE is TIMESTAMP_LTZ(p);
//     TIMESTAMP WITHOUT TIME ZONE is TIMESTAMP; an explicit NULL (nullable) is dropped.
//   - SUBSTRING(s FROM a [FOR b]) is SUBSTRING(s, a[, b]); POSITION(a IN b) is POSITION(a, b);
//     TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) is TRIM|LTRIM|RTRIM(s[, chars]);
//     CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIMESTAMP and LOCALTIME, with or
//     without (), are a FuncCall without arguments.
//   - A column's PRIMARY KEY NOT ENFORCED becomes CreateTableStmt.PrimaryKey; column and
//     table COMMENTs are dropped.
//   - EXPLAIN PLAN FOR is EXPLAIN; DESC is DESCRIBE; SET with an unquoted key or value keeps
//     its text with whitespace removed.
//   - JOIN is INNER JOIN; LEFT OUTER JOIN is LEFT JOIN, and RIGHT and FULL likewise. ASC in
//     an ORDER BY is dropped (ascending is the default).
//
// Positions: a node's Pos is where its text starts, so a BinaryExpr, IsExpr, BetweenExpr,
// InExpr or LikeExpr is at its left operand, a JoinTable at its left table, an OverExpr at
// its function name, and a QueryStmt is at its first '(' if any.

// Pos is a node's position in the SQL text (1-based line and column).
type Pos = lexer.Position

// Script is a sequence of statements separated by ';'.
type Script struct {
	Stmts []Stmt
}

// Stmt is one SQL statement.
type Stmt interface {
	Node
	stmt()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	expr()
}

// TableExpr is something a FROM clause reads from.
type TableExpr interface {
	Node
	tableExpr()
}

// Node is any AST node: it knows where it starts and prints as canonical SQL.
type Node interface {
	Position() Pos
	String() string
}

// --- statements ---

// SetStmt is SET 'key' = 'value'. Key and Value hold the unquoted text; both are "" for
// SET alone, which lists the settings.
type SetStmt struct {
	Pos   Pos
	Key   string
	Value string
}

// CreateTableStmt is CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (...) WITH (...).
type CreateTableStmt struct {
	Pos         Pos
	OrReplace   bool // CREATE OR REPLACE TABLE ... AS SELECT
	Temporary   bool
	IfNotExists bool
	Name        string
	Columns     []*ColumnDef
	Watermark   *WatermarkDef // nil when absent
	PrimaryKey  []string      // nil when absent; always NOT ENFORCED
	// PartitionedBy lists the columns of PARTITIONED BY (...), nil when absent.
	PartitionedBy []string
	Options       []*Option
	Like          *LikeClause // LIKE other (...), or nil
	Query         *Query      // AS query (CTAS), or nil
}

// LikeClause is CREATE TABLE's LIKE table [(option ...)].
type LikeClause struct {
	Pos     Pos
	Table   string
	Options []LikeOption
}

// LikeOption is one of Flink's like options: Mode INCLUDING, EXCLUDING or OVERWRITING,
// Feature ALL, CONSTRAINTS, PARTITIONS, GENERATED, OPTIONS, WATERMARKS or METADATA.
type LikeOption struct {
	Pos     Pos
	Mode    string
	Feature string
}

// ColumnDef is a physical column `name TYPE [NOT NULL]`, a metadata column `name TYPE
// METADATA [FROM 'key'] [VIRTUAL]` or a computed column `name AS expr`.
type ColumnDef struct {
	Pos      Pos
	Name     string
	Type     *TypeName // nil for a computed column
	Computed Expr      // nil for a physical column
	// Metadata marks a metadata column; MetadataKey is its FROM key ("" when the key is
	// the column's name), Virtual says it is read only.
	Metadata    bool
	MetadataKey string
	Virtual     bool
}

// TypeName is a SQL type as written: Name is upper case (INT, BIGINT, DECIMAL, VARCHAR, STRING,
// TIMESTAMP, TIMESTAMP_LTZ, DATE, BOOLEAN, DOUBLE, ROW, ARRAY, MAP, MULTISET, ...), Params
// holds (p[, s]). `TIMESTAMP(3) WITH LOCAL TIME ZONE` is normalised to TIMESTAMP_LTZ, `T
// ARRAY` to ARRAY<T>, `T MULTISET` to MULTISET<T>.
type TypeName struct {
	Pos     Pos
	Name    string
	Params  []int
	NotNull bool
	Fields  []*RowField // ROW's fields
	Elem    *TypeName   // ARRAY's and MULTISET's element type, MAP's key type
	Value   *TypeName   // MAP's value type
}

// RowField is one `name type` of a ROW type.
type RowField struct {
	Pos  Pos
	Name string
	Type *TypeName
}

// WatermarkDef is WATERMARK FOR column AS expr.
type WatermarkDef struct {
	Pos    Pos
	Column string
	Expr   Expr
}

// Option is one 'key' = 'value' pair of a WITH clause (unquoted text).
type Option struct {
	Pos   Pos
	Key   string
	Value string
}

// CreateViewStmt is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS query.
type CreateViewStmt struct {
	Pos         Pos
	Temporary   bool
	IfNotExists bool
	Name        string
	Columns     []string
	Query       *Query
}

// DropStmt is DROP [TEMPORARY] TABLE|VIEW [IF EXISTS] name.
type DropStmt struct {
	Pos       Pos
	View      bool // false: TABLE
	Temporary bool
	IfExists  bool
	Name      string
}

// QueryStmt is a SELECT used as a statement.
type QueryStmt struct {
	Pos   Pos
	Query *Query
}

// InsertStmt is INSERT INTO table [(cols)] query.
type InsertStmt struct {
	Pos     Pos
	Table   string
	Hints   []*Hint // table hints of the target, /*+ OPTIONS(...) */ after its name
	Columns []string
	Query   *Query
}

// ExplainStmt is EXPLAIN [detail, ...] followed by a QueryStmt, an InsertStmt or a
// StatementSetStmt. Details are Flink's ExplainDetails, upper case: ESTIMATED_COST,
// CHANGELOG_MODE, PLAN_ADVICE, JSON_EXECUTION_PLAN.
type ExplainStmt struct {
	Pos     Pos
	Details []string
	Stmt    Stmt
}

// ShowTablesStmt is SHOW TABLES (views included).
type ShowTablesStmt struct {
	Pos Pos
}

// ShowStmt is SHOW CATALOGS, SHOW DATABASES, SHOW CURRENT CATALOG or SHOW CURRENT
// DATABASE (What, upper case).
type ShowStmt struct {
	Pos  Pos
	What string
}

// ShowColumnsStmt is SHOW COLUMNS FROM|IN table.
type ShowColumnsStmt struct {
	Pos   Pos
	Table string
}

// ShowCreateStmt is SHOW CREATE TABLE|VIEW name.
type ShowCreateStmt struct {
	Pos  Pos
	View bool
	Name string
}

// UseStmt is USE [CATALOG] name: Name is catalog.database, database or (with Catalog) a
// catalog, as parts.
type UseStmt struct {
	Pos     Pos
	Catalog bool
	Name    []string
}

// ResetStmt is RESET 'key', or RESET (Key "") for every key.
type ResetStmt struct {
	Pos Pos
	Key string
}

// CreateFunctionStmt is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS
// 'class' [LANGUAGE lang]; Language is upper case, "" when absent.
type CreateFunctionStmt struct {
	Pos         Pos
	Temporary   bool
	System      bool
	IfNotExists bool
	Name        []string
	Class       string
	Language    string
}

// ShowCheckpointsStmt is SHOW CHECKPOINTS: the statistics of the session's checkpoints.
type ShowCheckpointsStmt struct {
	Pos Pos
}

// ShowJobsStmt is SHOW JOBS: the session's jobs and their status.
type ShowJobsStmt struct {
	Pos Pos
}

// StopJobStmt is STOP JOB 'name' [WITH SAVEPOINT] [WITH DRAIN]: a graceful stop; with
// DRAIN the final watermark goes first, so that every window fires.
type StopJobStmt struct {
	Pos       Pos
	Name      string
	Savepoint bool
	Drain     bool
}

// DescribeJobStmt is DESCRIBE JOB 'name': a running job's operator graph and figures.
type DescribeJobStmt struct {
	Pos  Pos
	Name string
}

// DescribeStmt is DESCRIBE name (also DESC name).
type DescribeStmt struct {
	Pos  Pos
	Name string
}

// --- queries ---

// Query is a query with the common table expressions of its WITH: a SELECT block, the
// rows of VALUES (Values set, the block empty) or a set operation (Set set, the block
// empty), then ORDER BY and LIMIT over the whole. A parenthesised query that has its own
// ORDER BY or LIMIT and is ordered or limited again becomes SELECT * FROM (query).
type Query struct {
	Pos      Pos
	Hints    []*Hint // query hints, /*+ ... */ after SELECT
	With     []*CTE
	Distinct bool
	Items    []*SelectItem
	From     TableExpr // nil for SELECT without FROM
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	Windows  []*WindowDef // the WINDOW clause's named windows
	Values   [][]Expr     // VALUES (a, b), ...: each row's columns
	Set      *SetOp
	OrderBy  []OrderItem
	Limit    Expr // nil when absent
}

// SetOp is Left UNION|INTERSECT|EXCEPT [ALL] Right. INTERSECT binds tighter than UNION
// and EXCEPT; all associate to the left.
type SetOp struct {
	Pos         Pos
	Op          string // UNION, INTERSECT or EXCEPT
	All         bool
	Left, Right *Query
}

// CTE is one `name [(columns)] AS (query)` of a WITH clause.
type CTE struct {
	Pos     Pos
	Name    string
	Columns []string
	Query   *Query
}

// SelectItem is `*`, `t.*`, or `expr [AS alias]`.
type SelectItem struct {
	Pos       Pos
	Star      bool
	Qualifier string // the t of t.*
	Expr      Expr
	Alias     string
}

// TableName is a named table or view in FROM, with an optional alias.
type TableName struct {
	Pos   Pos
	Name  string
	Alias string
	Hints []*Hint // table hints, /*+ OPTIONS(...) */ after the name
	// AsOf is the time of FOR SYSTEM_TIME AS OF, which makes the table the versioned or
	// lookup side of a temporal join; nil otherwise.
	AsOf Expr
}

// WindowTable is a window table-valued function in FROM:
// TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)), and HOP, CUMULATE and
// SESSION likewise. It reads a table or view (Table) or a subquery (Query). Args are the
// arguments after the descriptor; with named arguments (DATA => TABLE t, TIMECOL =>
// DESCRIPTOR(ts), SIZE => ...), ArgNames holds their names, upper case, in the order
// written (DATA and TIMECOL are not among them); it is nil for positional ones.
type WindowTable struct {
	Pos         Pos
	Fn          string // upper case
	Table       string // "" when Query is set
	Query       *Query
	PartitionBy []string // SESSION's PARTITION BY columns
	TimeCol     string
	Args        []Expr
	ArgNames    []string
	Alias       string
}

// UnnestTable is UNNEST(expr) [WITH ORDINALITY] [AS] alias [(columns)] in FROM: the
// elements of an ARRAY or MAP, on the right of a join with the table its expression reads
// (CROSS JOIN UNNEST(t.tags) AS u (tag)).
type UnnestTable struct {
	Pos        Pos
	Expr       Expr
	Ordinality bool
	Alias      string
	Columns    []string // nil: the element's own names
}

// SubqueryTable is (query) [AS] alias [(columns)] in FROM; the columns rename the
// query's.
type SubqueryTable struct {
	Pos     Pos
	Query   *Query
	Alias   string
	Columns []string
}

// JoinTable is `Left [INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER]] JOIN Right ON On`.
// Joins associate to the left: a JOIN b ON x JOIN c ON y is (a JOIN b ON x) JOIN c ON y.
type JoinTable struct {
	Pos   Pos    // where Left starts
	Comma bool   // `Left, Right`: an INNER join without ON, its condition in WHERE
	Cross bool   // `Left CROSS JOIN Right`: an INNER join ON TRUE
	Kind  string // INNER, LEFT, RIGHT or FULL
	Left  TableExpr
	Right TableExpr
	On    Expr
}

// --- expressions ---

// Ident is a column reference, possibly qualified: Parts = [t, col] or [col].
type Ident struct {
	Pos   Pos
	Parts []string
}

// NumberLit is a numeric literal as written: 42, 4.2, 4.2e1.
type NumberLit struct {
	Pos  Pos
	Text string
}

// StringLit is a '...' literal, unescaped.
type StringLit struct {
	Pos   Pos
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Pos   Pos
	Value bool
}

// NullLit is NULL.
type NullLit struct {
	Pos Pos
}

// IntervalLit is INTERVAL 'value' unit [TO unit2], units upper case (SECOND, MINUTE, HOUR, DAY,
// MONTH, YEAR); ToUnit is "" when absent. A leading '-' in Value negates.
type IntervalLit struct {
	Pos    Pos
	Value  string
	Unit   string
	ToUnit string
}

// TypedLit is TIMESTAMP '...', DATE '...', TIME '...' (Type upper case).
type TypedLit struct {
	Pos   Pos
	Type  string
	Value string
}

// BinaryExpr is Left Op Right. Op is upper case and one of:
// OR AND = <> < <= > >= + - * / % ||  (!= is normalised to <>).
type BinaryExpr struct {
	Pos   Pos
	Op    string
	Left  Expr
	Right Expr
}

// UnaryExpr is NOT x, -x or +x.
type UnaryExpr struct {
	Pos Pos
	Op  string
	X   Expr
}

// IsExpr is x IS [NOT] NULL|TRUE|FALSE|UNKNOWN, x IS [NOT] JSON [SCALAR|ARRAY|OBJECT], or
// x IS [NOT] DISTINCT FROM y; What is "NULL", "TRUE", "FALSE", "UNKNOWN", "JSON",
// "JSON SCALAR", "JSON ARRAY", "JSON OBJECT" or "DISTINCT FROM" (then From is y).
type IsExpr struct {
	Pos  Pos
	X    Expr
	Not  bool
	What string
	From Expr
}

// BetweenExpr is x [NOT] BETWEEN [ASYMMETRIC | SYMMETRIC] low AND high.
type BetweenExpr struct {
	Pos       Pos
	X         Expr
	Low       Expr
	High      Expr
	Not       bool
	Symmetric bool
}

// InExpr is x [NOT] IN (list), or x [NOT] IN (query) when Query is set (List is nil
// then). X is a ROW constructor for (a, b) IN (SELECT c, d ...).
type InExpr struct {
	Pos   Pos
	X     Expr
	List  []Expr
	Query *Query
	Not   bool
}

// ExistsExpr is EXISTS (query); NOT EXISTS is a UnaryExpr NOT over it.
type ExistsExpr struct {
	Pos   Pos
	Query *Query
}

// SubqueryExpr is a scalar subquery, (query) used as a value.
type SubqueryExpr struct {
	Pos   Pos
	Query *Query
}

// LikeExpr is x [NOT] LIKE pattern [ESCAPE 'c'], or with Similar x [NOT] SIMILAR TO
// pattern [ESCAPE 'c'].
type LikeExpr struct {
	Pos     Pos
	X       Expr
	Pattern Expr
	Escape  string // "" when absent
	Not     bool
	Similar bool
}

// CaseExpr is CASE [operand] WHEN ... THEN ... [ELSE ...] END.
type CaseExpr struct {
	Pos     Pos
	Operand Expr // nil for a searched CASE
	Whens   []*WhenClause
	Else    Expr // nil when absent
}

// WhenClause is WHEN Cond THEN Result; in a simple CASE, WHEN v1, v2, ... THEN Result
// has the values after the first in Also.
type WhenClause struct {
	Pos    Pos
	Cond   Expr
	Also   []Expr
	Result Expr
}

// CastExpr is CAST(x AS type) or TRY_CAST(x AS type).
type CastExpr struct {
	Pos  Pos
	X    Expr
	Type *TypeName
	Try  bool
}

// FuncCall is name([DISTINCT] args) or COUNT(*). Name is upper case. Special syntaxes are
// normalised to calls: SUBSTRING(s FROM a [FOR b]) -> SUBSTRING(s, a[, b]);
// POSITION(a IN b) -> POSITION(a, b); TRIM([BOTH|LEADING|TRAILING] [chars] FROM s) ->
// TRIM(s, chars?) with Name TRIM, LTRIM or RTRIM; CURRENT_TIMESTAMP (no parentheses) ->
// CURRENT_TIMESTAMP(). An aggregate call may be followed by FILTER (WHERE cond), kept in
// Filter; whether the function is an aggregate is the planner's to check.
type FuncCall struct {
	Pos      Pos
	Name     string
	Distinct bool
	Star     bool
	Args     []Expr
	TimeUnit string // FLOOR(x TO unit) and CEIL(x TO unit): the unit, upper case
	Filter   Expr   // agg(...) FILTER (WHERE Filter); nil without
	// OnNull is the NULL treatment written before the closing parenthesis, upper case:
	// ARRAY_AGG's "RESPECT NULLS" or "IGNORE NULLS", JSON_ARRAYAGG's and JSON_OBJECTAGG's
	// (and JSON_ARRAY's and JSON_OBJECT's) "NULL ON NULL" or "ABSENT ON NULL"; empty when
	// not written. JSON_OBJECTAGG([KEY] k VALUE v ...) has Args k, v; JSON_OBJECT k1, v1,
	// k2, v2, ...
	OnNull string
	// Clauses are JSON_QUERY's wrapper and ON EMPTY / ON ERROR clauses after its
	// arguments, upper case and single-spaced; empty when none is written.
	Clauses string
	// JSON_VALUE's RETURNING type and ON EMPTY / ON ERROR clauses; nil when not written.
	Returning        *TypeName
	OnEmpty, OnError *JSONBehavior
}

// JSONBehavior is JSON_VALUE's ON EMPTY or ON ERROR clause: Kind "NULL", "ERROR" or
// "DEFAULT", then with its Default expression.
type JSONBehavior struct {
	Kind    string
	Default Expr
}

// ExtractExpr is EXTRACT(unit FROM x); Unit upper case (YEAR, MONTH, DAY, HOUR, MINUTE,
// SECOND, MILLISECOND, DOW, DOY, WEEK, QUARTER, EPOCH).
type ExtractExpr struct {
	Pos  Pos
	Unit string
	X    Expr
}

// OverExpr is a function over a window of rows, fn(...) OVER (window) or fn(...) OVER name:
// a ranking function, ROW_NUMBER() OVER ([PARTITION BY e, ...] ORDER BY e [ASC|DESC], ...),
// or an aggregate (or LAG/LEAD) call over a window, SUM(x) OVER (PARTITION BY k ORDER BY ts
// ROWS BETWEEN 10 PRECEDING AND CURRENT ROW).
// Fn is the function's name, upper case: for the ranking functions ROW_NUMBER, RANK or
// DENSE_RANK (Call nil), which the parser accepts and the planner decides which it supports;
// otherwise the name of Call, the call (arguments, DISTINCT, FILTER) the window applies to.
// With Name set (OVER w), the window is the one the query's WINDOW clause defines by that
// name, and the WindowSpec is empty. PARTITION BY and ORDER BY are both optional in the
// grammar (nil when absent); what a window needs is the planner's to check.
type OverExpr struct {
	Pos  Pos
	Fn   string    // upper case, e.g. ROW_NUMBER or SUM
	Call *FuncCall // the aggregate or LAG/LEAD call; nil for a ranking function
	Name string    // OVER name: a window of the WINDOW clause
	WindowSpec
}

// WindowSpec is what an OVER clause or a WINDOW definition writes between its
// parentheses: [PARTITION BY e, ...] [ORDER BY e [ASC|DESC], ...] [frame]. ASC is not
// kept: an item is ascending unless Desc.
type WindowSpec struct {
	PartitionBy []Expr
	OrderBy     []OrderItem
	Frame       *Frame // nil: the default frame
}

// Frame is a window's frame: ROWS or RANGE, BETWEEN Start AND End, or Start alone (End
// then CURRENT ROW, Between false).
type Frame struct {
	Pos     Pos
	Range   bool // RANGE; else ROWS
	Between bool
	Start   FrameBound
	End     FrameBound
}

// FrameBound is one end of a frame: UNBOUNDED PRECEDING or FOLLOWING, CURRENT ROW, or
// Offset PRECEDING or FOLLOWING.
type FrameBound struct {
	Pos       Pos
	Unbounded bool
	Current   bool
	Following bool // FOLLOWING; else PRECEDING (meaningless for CURRENT ROW)
	Offset    Expr // n or INTERVAL ...; nil when Unbounded or Current
}

// WindowDef is one `name AS (spec)` of a SELECT's WINDOW clause.
type WindowDef struct {
	Pos  Pos
	Name string
	Spec WindowSpec
}

// ItemExpr is X[Index]: an ARRAY's element (1-based) or a MAP's value at a key.
type ItemExpr struct {
	Pos   Pos
	X     Expr
	Index Expr
}

// FieldExpr is X.Name, a field of a ROW value that is not a column reference (a[1].f,
// (expr).f); a column's field, t.r.f or r.f, is an Ident of more parts.
type FieldExpr struct {
	Pos  Pos
	X    Expr
	Name string
}

// CollectionExpr is ARRAY[e, ...] (Kind "ARRAY") or MAP[k1, v1, k2, v2, ...] (Kind
// "MAP"). ROW(a, b) and (a, b) are a FuncCall named ROW.
type CollectionExpr struct {
	Pos   Pos
	Kind  string
	Elems []Expr
}

// OrderItem is one ORDER BY expression and its direction.
type OrderItem struct {
	Expr Expr
	Desc bool
}

func (*SetStmt) stmt()             {}
func (*CreateTableStmt) stmt()     {}
func (*CreateViewStmt) stmt()      {}
func (*DropStmt) stmt()            {}
func (*QueryStmt) stmt()           {}
func (*InsertStmt) stmt()          {}
func (*ExplainStmt) stmt()         {}
func (*ShowTablesStmt) stmt()      {}
func (*ShowCheckpointsStmt) stmt() {}
func (*DescribeStmt) stmt()        {}
func (*DescribeJobStmt) stmt()     {}
func (*ShowJobsStmt) stmt()        {}
func (*StopJobStmt) stmt()         {}
func (*ShowStmt) stmt()            {}
func (*ShowColumnsStmt) stmt()     {}
func (*ShowCreateStmt) stmt()      {}
func (*UseStmt) stmt()             {}
func (*ResetStmt) stmt()           {}
func (*CreateFunctionStmt) stmt()  {}

func (*TableName) tableExpr()     {}
func (*SubqueryTable) tableExpr() {}
func (*UnnestTable) tableExpr()   {}
func (*WindowTable) tableExpr()   {}
func (*JoinTable) tableExpr()     {}

func (*Ident) expr()          {}
func (*NumberLit) expr()      {}
func (*StringLit) expr()      {}
func (*BoolLit) expr()        {}
func (*NullLit) expr()        {}
func (*IntervalLit) expr()    {}
func (*TypedLit) expr()       {}
func (*BinaryExpr) expr()     {}
func (*UnaryExpr) expr()      {}
func (*IsExpr) expr()         {}
func (*BetweenExpr) expr()    {}
func (*InExpr) expr()         {}
func (*LikeExpr) expr()       {}
func (*CaseExpr) expr()       {}
func (*CastExpr) expr()       {}
func (*FuncCall) expr()       {}
func (*ExtractExpr) expr()    {}
func (*OverExpr) expr()       {}
func (*ItemExpr) expr()       {}
func (*FieldExpr) expr()      {}
func (*CollectionExpr) expr() {}
func (*ExistsExpr) expr()     {}
func (*SubqueryExpr) expr()   {}

func (n *SetStmt) Position() Pos             { return n.Pos }
func (n *CreateTableStmt) Position() Pos     { return n.Pos }
func (n *CreateViewStmt) Position() Pos      { return n.Pos }
func (n *DropStmt) Position() Pos            { return n.Pos }
func (n *QueryStmt) Position() Pos           { return n.Pos }
func (n *InsertStmt) Position() Pos          { return n.Pos }
func (n *ExplainStmt) Position() Pos         { return n.Pos }
func (n *ShowTablesStmt) Position() Pos      { return n.Pos }
func (n *ShowCheckpointsStmt) Position() Pos { return n.Pos }
func (n *DescribeStmt) Position() Pos        { return n.Pos }
func (n *DescribeJobStmt) Position() Pos     { return n.Pos }
func (n *ShowJobsStmt) Position() Pos        { return n.Pos }
func (n *StopJobStmt) Position() Pos         { return n.Pos }
func (n *ShowStmt) Position() Pos            { return n.Pos }
func (n *ShowColumnsStmt) Position() Pos     { return n.Pos }
func (n *ShowCreateStmt) Position() Pos      { return n.Pos }
func (n *UseStmt) Position() Pos             { return n.Pos }
func (n *ResetStmt) Position() Pos           { return n.Pos }
func (n *CreateFunctionStmt) Position() Pos  { return n.Pos }
func (n *TableName) Position() Pos           { return n.Pos }
func (n *SubqueryTable) Position() Pos       { return n.Pos }
func (n *UnnestTable) Position() Pos         { return n.Pos }
func (n *WindowTable) Position() Pos         { return n.Pos }
func (n *JoinTable) Position() Pos           { return n.Pos }
func (n *Ident) Position() Pos               { return n.Pos }
func (n *NumberLit) Position() Pos           { return n.Pos }
func (n *StringLit) Position() Pos           { return n.Pos }
func (n *BoolLit) Position() Pos             { return n.Pos }
func (n *NullLit) Position() Pos             { return n.Pos }
func (n *IntervalLit) Position() Pos         { return n.Pos }
func (n *TypedLit) Position() Pos            { return n.Pos }
func (n *BinaryExpr) Position() Pos          { return n.Pos }
func (n *UnaryExpr) Position() Pos           { return n.Pos }
func (n *IsExpr) Position() Pos              { return n.Pos }
func (n *BetweenExpr) Position() Pos         { return n.Pos }
func (n *InExpr) Position() Pos              { return n.Pos }
func (n *LikeExpr) Position() Pos            { return n.Pos }
func (n *CaseExpr) Position() Pos            { return n.Pos }
func (n *CastExpr) Position() Pos            { return n.Pos }
func (n *FuncCall) Position() Pos            { return n.Pos }
func (n *ExtractExpr) Position() Pos         { return n.Pos }
func (n *OverExpr) Position() Pos            { return n.Pos }
func (n *ItemExpr) Position() Pos            { return n.Pos }
func (n *FieldExpr) Position() Pos           { return n.Pos }
func (n *CollectionExpr) Position() Pos      { return n.Pos }
func (n *ExistsExpr) Position() Pos          { return n.Pos }
func (n *SubqueryExpr) Position() Pos        { return n.Pos }
func (n *SetOp) Position() Pos               { return n.Pos }
