package parser

import (
	"fmt"
	"strconv"
	"strings"
)

// This file prints the AST as canonical SQL: keywords upper case, identifiers quoted only
// when needed, aliases always with AS, parentheses only where precedence requires them.
// Parsing the output gives back the same tree (positions aside); print_test.go checks it.

func (s *Script) String() string {
	parts := make([]string, len(s.Stmts))
	for i, st := range s.Stmts {
		parts[i] = st.String()
	}
	return strings.Join(parts, ";\n")
}

func (n *SetStmt) String() string {
	if n.Key == "" && n.Value == "" {
		return "SET"
	}
	return "SET " + quoteString(n.Key) + " = " + quoteString(n.Value)
}

func (n *CreateTableStmt) String() string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if n.OrReplace {
		b.WriteString("OR REPLACE ")
	}
	if n.Temporary {
		b.WriteString("TEMPORARY ")
	}
	b.WriteString("TABLE ")
	if n.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(quoteIdent(n.Name))
	var elems []string
	for _, c := range n.Columns {
		elems = append(elems, c.String())
	}
	if n.Watermark != nil {
		elems = append(elems, n.Watermark.String())
	}
	if n.PrimaryKey != nil {
		elems = append(elems, "PRIMARY KEY ("+identList(n.PrimaryKey)+") NOT ENFORCED")
	}
	if len(elems) > 0 {
		b.WriteString(" (\n  " + strings.Join(elems, ",\n  ") + "\n)")
	}
	if len(n.PartitionedBy) > 0 {
		b.WriteString(" PARTITIONED BY (" + identList(n.PartitionedBy) + ")")
	}
	if len(n.Options) > 0 {
		opts := make([]string, len(n.Options))
		for i, o := range n.Options {
			opts[i] = o.String()
		}
		b.WriteString(" WITH (\n  " + strings.Join(opts, ",\n  ") + "\n)")
	}
	if n.Like != nil {
		b.WriteString(" LIKE " + quoteIdent(n.Like.Table))
		if len(n.Like.Options) > 0 {
			opts := make([]string, len(n.Like.Options))
			for i, o := range n.Like.Options {
				opts[i] = o.Mode + " " + o.Feature
			}
			b.WriteString(" (" + strings.Join(opts, " ") + ")")
		}
	}
	if n.Query != nil {
		b.WriteString(" AS " + n.Query.String())
	}
	return b.String()
}

func (n *ColumnDef) String() string {
	if n.Computed != nil {
		return quoteIdent(n.Name) + " AS " + n.Computed.String()
	}
	s := quoteIdent(n.Name) + " " + n.Type.String()
	if n.Metadata {
		s += " METADATA"
		if n.MetadataKey != "" {
			s += " FROM " + quoteString(n.MetadataKey)
		}
		if n.Virtual {
			s += " VIRTUAL"
		}
	}
	return s
}

func (n *TypeName) String() string {
	s := n.Name
	switch n.Name {
	case "ROW":
		fs := make([]string, len(n.Fields))
		for i, f := range n.Fields {
			fs[i] = quoteIdent(f.Name) + " " + f.Type.String()
		}
		s += "<" + strings.Join(fs, ", ") + ">"
	case "ARRAY", "MULTISET":
		s += "<" + n.Elem.String() + ">"
	case "MAP":
		s += "<" + n.Elem.String() + ", " + n.Value.String() + ">"
	}
	if len(n.Params) > 0 {
		ps := make([]string, len(n.Params))
		for i, p := range n.Params {
			ps[i] = strconv.Itoa(p)
		}
		s += "(" + strings.Join(ps, ", ") + ")"
	}
	if n.NotNull {
		s += " NOT NULL"
	}
	return s
}

func (n *WatermarkDef) String() string {
	return "WATERMARK FOR " + quoteIdent(n.Column) + " AS " + n.Expr.String()
}

func (n *Option) String() string { return quoteString(n.Key) + " = " + quoteString(n.Value) }

func (n *CreateViewStmt) String() string {
	s := "CREATE "
	if n.Temporary {
		s += "TEMPORARY "
	}
	s += "VIEW "
	if n.IfNotExists {
		s += "IF NOT EXISTS "
	}
	s += quoteIdent(n.Name)
	if n.Columns != nil {
		s += " (" + identList(n.Columns) + ")"
	}
	return s + " AS " + n.Query.String()
}

func (n *DropStmt) String() string {
	s := "DROP "
	if n.Temporary {
		s += "TEMPORARY "
	}
	if n.View {
		s += "VIEW "
	} else {
		s += "TABLE "
	}
	if n.IfExists {
		s += "IF EXISTS "
	}
	return s + quoteIdent(n.Name)
}

func (n *QueryStmt) String() string { return n.Query.String() }

func (n *InsertStmt) String() string {
	s := "INSERT INTO " + quoteIdent(n.Table) + hintsString(n.Hints)
	if n.Columns != nil {
		s += " (" + identList(n.Columns) + ")"
	}
	return s + " " + n.Query.String()
}

func (n *ExplainStmt) String() string {
	s := "EXPLAIN "
	if len(n.Details) > 0 {
		s += strings.Join(n.Details, ", ") + " "
	}
	if set, ok := n.Stmt.(*StatementSetStmt); ok {
		return s + strings.TrimPrefix(set.String(), "EXECUTE ")
	}
	return s + n.Stmt.String()
}
func (n *ShowTablesStmt) String() string      { return "SHOW TABLES" }
func (n *ShowCheckpointsStmt) String() string { return "SHOW CHECKPOINTS" }
func (n *DescribeStmt) String() string        { return "DESCRIBE " + quoteIdent(n.Name) }
func (n *ShowJobsStmt) String() string        { return "SHOW JOBS" }
func (n *DescribeJobStmt) String() string     { return "DESCRIBE JOB " + quoteString(n.Name) }
func (n *ShowStmt) String() string            { return "SHOW " + n.What }
func (n *ShowColumnsStmt) String() string     { return "SHOW COLUMNS FROM " + quoteIdent(n.Table) }

func (n *ShowCreateStmt) String() string {
	if n.View {
		return "SHOW CREATE VIEW " + quoteIdent(n.Name)
	}
	return "SHOW CREATE TABLE " + quoteIdent(n.Name)
}

func (n *UseStmt) String() string {
	s := "USE "
	if n.Catalog {
		s += "CATALOG "
	}
	return s + dotted(n.Name)
}

func (n *ResetStmt) String() string {
	if n.Key == "" {
		return "RESET"
	}
	return "RESET " + quoteString(n.Key)
}

func (n *CreateFunctionStmt) String() string {
	s := "CREATE "
	if n.Temporary {
		s += "TEMPORARY "
	}
	if n.System {
		s += "SYSTEM "
	}
	s += "FUNCTION "
	if n.IfNotExists {
		s += "IF NOT EXISTS "
	}
	s += dotted(n.Name) + " AS " + quoteString(n.Class)
	if n.Language != "" {
		s += " LANGUAGE " + n.Language
	}
	return s
}

func dotted(parts []string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = quoteIdent(p)
	}
	return strings.Join(q, ".")
}
func (n *StopJobStmt) String() string {
	s := "STOP JOB " + quoteString(n.Name)
	if n.Savepoint {
		s += " WITH SAVEPOINT"
	}
	if n.Drain {
		s += " WITH DRAIN"
	}
	return s
}

func (n *Query) String() string {
	var b strings.Builder
	n.printWith(&b)
	switch {
	case n.Set != nil:
		b.WriteString(n.Set.String())
	case n.Values != nil:
		b.WriteString("VALUES ")
		for i, row := range n.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + exprList(row) + ")")
		}
	default:
		n.printSelect(&b)
	}
	for i, o := range n.OrderBy {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(o.Expr.String())
		if o.Desc {
			b.WriteString(" DESC")
		}
	}
	if n.Limit != nil {
		b.WriteString(" LIMIT " + n.Limit.String())
	}
	return b.String()
}

// String prints a set operation's operands, parenthesised where they would otherwise
// read differently: with a WITH, ORDER BY or LIMIT of their own, or a set operation on
// the right or binding less tightly on the left.
func (n *SetOp) String() string {
	operand := func(q *Query, right bool) string {
		paren := len(q.With) > 0 || q.OrderBy != nil || q.Limit != nil
		if q.Set != nil {
			paren = paren || right || setPrec(q.Set.Op) < setPrec(n.Op)
		}
		if paren {
			return "(" + q.String() + ")"
		}
		return q.String()
	}
	op := n.Op
	if n.All {
		op += " ALL"
	}
	return operand(n.Left, false) + " " + op + " " + operand(n.Right, true)
}

func (n *Query) printWith(b *strings.Builder) {
	for i, c := range n.With {
		if i == 0 {
			b.WriteString("WITH ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
		if c.Columns != nil {
			b.WriteString(" (" + identList(c.Columns) + ")")
		}
		b.WriteString(" AS (" + c.Query.String() + ")")
	}
	if len(n.With) > 0 {
		b.WriteString(" ")
	}
}

func (n *Query) printSelect(b *strings.Builder) {
	b.WriteString("SELECT" + hintsString(n.Hints) + " ")
	if n.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, it := range n.Items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.String())
	}
	if n.From != nil {
		b.WriteString(" FROM " + n.From.String())
	}
	if n.Where != nil {
		b.WriteString(" WHERE " + n.Where.String())
	}
	if len(n.GroupBy) > 0 {
		b.WriteString(" GROUP BY " + exprList(n.GroupBy))
	}
	if n.Having != nil {
		b.WriteString(" HAVING " + n.Having.String())
	}
	for i, w := range n.Windows {
		if i == 0 {
			b.WriteString(" WINDOW ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(w.Name) + " AS (" + w.Spec.String() + ")")
	}
}

func (n *SelectItem) String() string {
	switch {
	case n.Star && n.Qualifier != "":
		return quoteIdent(n.Qualifier) + ".*"
	case n.Star:
		return "*"
	}
	return n.Expr.String() + alias(n.Alias)
}

func (n *TableName) String() string {
	s := quoteIdent(n.Name) + hintsString(n.Hints)
	if n.AsOf != nil {
		s += " FOR SYSTEM_TIME AS OF " + n.AsOf.String()
	}
	return s + alias(n.Alias)
}
func (n *SubqueryTable) String() string {
	s := "(" + n.Query.String() + ")" + alias(n.Alias)
	if n.Columns != nil {
		s += " (" + identList(n.Columns) + ")"
	}
	return s
}

func (n *UnnestTable) String() string {
	s := "UNNEST(" + n.Expr.String() + ")"
	if n.Ordinality {
		s += " WITH ORDINALITY"
	}
	s += alias(n.Alias)
	if n.Columns != nil {
		s += " (" + identList(n.Columns) + ")"
	}
	return s
}

func (n *WindowTable) String() string {
	var b strings.Builder
	named := func(name string) {
		if n.ArgNames != nil {
			b.WriteString(name + " => ")
		}
	}
	fmt.Fprintf(&b, "TABLE(%s(", n.Fn)
	named("DATA")
	if n.Query != nil {
		b.WriteString("(" + n.Query.String() + ")")
	} else {
		b.WriteString("TABLE " + quoteIdent(n.Table))
	}
	for i, c := range n.PartitionBy {
		if i == 0 {
			b.WriteString(" PARTITION BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c))
	}
	b.WriteString(", ")
	named("TIMECOL")
	fmt.Fprintf(&b, "DESCRIPTOR(%s)", quoteIdent(n.TimeCol))
	for i, a := range n.Args {
		b.WriteString(", ")
		if n.ArgNames != nil {
			named(n.ArgNames[i])
		}
		b.WriteString(a.String())
	}
	return b.String() + "))" + alias(n.Alias)
}

// A JoinTable prints its kind in full (INNER JOIN, LEFT JOIN) and its condition like a
// WHERE clause. Joins associate to the left, so a join on the right is parenthesised; the
// parser does not read parenthesised joins, but it never builds one there either.
func (n *JoinTable) String() string {
	right := n.Right.String()
	if _, ok := n.Right.(*JoinTable); ok {
		right = "(" + right + ")"
	}
	if n.Comma {
		return n.Left.String() + ", " + right
	}
	if n.Cross {
		return n.Left.String() + " CROSS JOIN " + right
	}
	return n.Left.String() + " " + n.Kind + " JOIN " + right + " ON " + n.On.String()
}

func alias(a string) string {
	if a == "" {
		return ""
	}
	return " AS " + quoteIdent(a)
}

// --- expressions ---

// precOf is how tightly e binds when printed; subexpressions that bind less tightly than
// their context requires are parenthesised.
func precOf(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		return binaryPrec[e.Op]
	case *UnaryExpr:
		if e.Op == "NOT" {
			return precNot
		}
		return precUnary
	case *IsExpr, *BetweenExpr, *InExpr, *LikeExpr:
		return precCmp
	}
	return precPrimary
}

// sub prints e as an operand that must bind at least as tightly as prec.
func sub(e Expr, prec int) string {
	if precOf(e) < prec {
		return "(" + e.String() + ")"
	}
	return e.String()
}

func (n *Ident) String() string {
	parts := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

func (n *NumberLit) String() string { return n.Text }
func (n *StringLit) String() string { return quoteString(n.Value) }
func (n *NullLit) String() string   { return "NULL" }

func (n *BoolLit) String() string {
	if n.Value {
		return "TRUE"
	}
	return "FALSE"
}

func (n *IntervalLit) String() string {
	s := "INTERVAL " + quoteString(n.Value) + " " + n.Unit
	if n.ToUnit != "" {
		s += " TO " + n.ToUnit
	}
	return s
}

func (n *TypedLit) String() string { return n.Type + " " + quoteString(n.Value) }

// BinaryExpr operators are left-associative: a right operand of the same precedence needs
// parentheses, a left one does not.
func (n *BinaryExpr) String() string {
	p := binaryPrec[n.Op]
	return sub(n.Left, p) + " " + n.Op + " " + sub(n.Right, p+1)
}

func (n *UnaryExpr) String() string {
	if n.Op == "NOT" {
		return "NOT " + sub(n.X, precNot)
	}
	// Anything but a primary is parenthesised, so that "- -x" never prints as a comment.
	return n.Op + sub(n.X, precPrimary)
}

func not(b bool) string {
	if b {
		return "NOT "
	}
	return ""
}

func (n *IsExpr) String() string {
	s := sub(n.X, precCmp) + " IS " + not(n.Not) + n.What
	if n.From != nil {
		s += " " + sub(n.From, precCmp+1)
	}
	return s
}

func (n *BetweenExpr) String() string {
	kw := "BETWEEN "
	if n.Symmetric {
		kw = "BETWEEN SYMMETRIC "
	}
	return sub(n.X, precCmp) + " " + not(n.Not) + kw + sub(n.Low, precConcat) +
		" AND " + sub(n.High, precConcat)
}

func (n *InExpr) String() string {
	if n.Query != nil {
		return sub(n.X, precCmp) + " " + not(n.Not) + "IN (" + n.Query.String() + ")"
	}
	return sub(n.X, precCmp) + " " + not(n.Not) + "IN (" + exprList(n.List) + ")"
}

func (n *ExistsExpr) String() string   { return "EXISTS (" + n.Query.String() + ")" }
func (n *SubqueryExpr) String() string { return "(" + n.Query.String() + ")" }

func (n *LikeExpr) String() string {
	op := "LIKE "
	if n.Similar {
		op = "SIMILAR TO "
	}
	s := sub(n.X, precCmp) + " " + not(n.Not) + op + sub(n.Pattern, precConcat)
	if n.Escape != "" {
		s += " ESCAPE " + quoteString(n.Escape)
	}
	return s
}

func (n *CaseExpr) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if n.Operand != nil {
		b.WriteString(" " + n.Operand.String())
	}
	for _, w := range n.Whens {
		b.WriteString(" " + w.String())
	}
	if n.Else != nil {
		b.WriteString(" ELSE " + n.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

func (n *WhenClause) String() string {
	s := "WHEN " + n.Cond.String()
	for _, v := range n.Also {
		s += ", " + v.String()
	}
	return s + " THEN " + n.Result.String()
}

func (n *CastExpr) String() string {
	name := "CAST"
	if n.Try {
		name = "TRY_CAST"
	}
	return name + "(" + n.X.String() + " AS " + n.Type.String() + ")"
}

func (n *ExtractExpr) String() string {
	return "EXTRACT(" + n.Unit + " FROM " + n.X.String() + ")"
}

func (n *OverExpr) String() string {
	fn := n.Fn + "()"
	if n.Call != nil {
		fn = n.Call.String()
	}
	if n.Name != "" {
		return fn + " OVER " + quoteIdent(n.Name)
	}
	return fn + " OVER (" + n.WindowSpec.String() + ")"
}

// String prints the spec as written between a window's parentheses.
func (w WindowSpec) String() string {
	var parts []string
	if len(w.PartitionBy) > 0 {
		parts = append(parts, "PARTITION BY "+exprList(w.PartitionBy))
	}
	if len(w.OrderBy) > 0 {
		items := make([]string, len(w.OrderBy))
		for i, o := range w.OrderBy {
			items[i] = o.String()
		}
		parts = append(parts, "ORDER BY "+strings.Join(items, ", "))
	}
	if w.Frame != nil {
		parts = append(parts, w.Frame.String())
	}
	return strings.Join(parts, " ")
}

func (f *Frame) String() string {
	s := "ROWS "
	if f.Range {
		s = "RANGE "
	}
	if !f.Between {
		return s + f.Start.String()
	}
	return s + "BETWEEN " + f.Start.String() + " AND " + f.End.String()
}

func (b FrameBound) String() string {
	dir := " PRECEDING"
	if b.Following {
		dir = " FOLLOWING"
	}
	switch {
	case b.Current:
		return "CURRENT ROW"
	case b.Unbounded:
		return "UNBOUNDED" + dir
	}
	return b.Offset.String() + dir
}

func (n *ItemExpr) String() string {
	return sub(n.X, precPrimary) + "[" + n.Index.String() + "]"
}

func (n *FieldExpr) String() string {
	x := sub(n.X, precPrimary)
	if _, ok := n.X.(*Ident); ok {
		x = "(" + x + ")" // a.b would read as one column reference
	}
	return x + "." + quoteIdent(n.Name)
}

func (n *CollectionExpr) String() string { return n.Kind + "[" + exprList(n.Elems) + "]" }

func (o OrderItem) String() string {
	if o.Desc {
		return o.Expr.String() + " DESC"
	}
	return o.Expr.String()
}

// trimSideOf gives the side keyword of TRIM(side chars FROM s) for each function name.
var trimSideOf = map[string]string{"TRIM": "BOTH", "LTRIM": "LEADING", "RTRIM": "TRAILING"}

func (n *FuncCall) String() string {
	if n.Filter != nil {
		c := *n
		c.Filter = nil
		return c.String() + " FILTER (WHERE " + n.Filter.String() + ")"
	}
	plain := !n.Distinct && !n.Star
	if plain && niladic[n.Name] && len(n.Args) == 0 {
		return n.Name
	}
	if n.Name == "OVERLAY" && plain && (len(n.Args) == 3 || len(n.Args) == 4) {
		s := "OVERLAY(" + n.Args[0].String() + " PLACING " + n.Args[1].String() + " FROM " + n.Args[2].String()
		if len(n.Args) == 4 {
			s += " FOR " + n.Args[3].String()
		}
		return s + ")"
	}
	if n.TimeUnit != "" && len(n.Args) == 1 {
		return n.Name + "(" + n.Args[0].String() + " TO " + n.TimeUnit + ")"
	}
	if side := trimSideOf[n.Name]; plain && side != "" && len(n.Args) == 2 {
		return "TRIM(" + side + " " + n.Args[1].String() + " FROM " + n.Args[0].String() + ")"
	}
	args := make([]string, len(n.Args))
	for i, a := range n.Args {
		args[i] = a.String()
	}
	if n.Name == "POSITION" && len(n.Args) > 0 {
		// The parser reads the first argument of POSITION with IN as a terminator.
		args[0] = sub(n.Args[0], precConcat)
		if plain && len(n.Args) == 2 {
			return "POSITION(" + args[0] + " IN " + args[1] + ")"
		}
	}
	list := strings.Join(args, ", ")
	if jsonObjects[n.Name] && len(args)%2 == 0 && !n.Star {
		pairs := make([]string, 0, len(args)/2)
		for i := 0; i < len(args); i += 2 {
			pairs = append(pairs, "KEY "+args[i]+" VALUE "+args[i+1])
		}
		list = strings.Join(pairs, ", ")
	}
	switch {
	case n.Star:
		list = "*"
	case n.Distinct:
		list = "DISTINCT " + list
	}
	if n.OnNull != "" {
		list += " " + n.OnNull
	}
	if n.Clauses != "" {
		list += " " + n.Clauses
	}
	if n.Returning != nil {
		list += " RETURNING " + n.Returning.String()
	}
	for _, b := range []struct {
		on string
		b  *JSONBehavior
	}{{"EMPTY", n.OnEmpty}, {"ERROR", n.OnError}} {
		switch {
		case b.b == nil:
		case b.b.Default != nil:
			list += " DEFAULT " + b.b.Default.String() + " ON " + b.on
		default:
			list += " " + b.b.Kind + " ON " + b.on
		}
	}
	return funcName(n.Name) + "(" + list + ")"
}

// funcName prints a function name, quoted where the parser would not read name( as a
// generic call.
func funcName(name string) string {
	switch {
	case keywordFuncs[name]:
		return name
	case name == "CAST" || name == "TRY_CAST" || name == "EXTRACT" || rankingFuncs[name]:
		return quoteIdentAlways(name)
	}
	return quoteIdent(name)
}

func exprList(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

func identList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = quoteIdent(n)
	}
	return strings.Join(parts, ", ")
}

// quoteIdent writes name as an identifier, `quoted` only if it is not a plain identifier
// or is a reserved word.
func quoteIdent(name string) string {
	if plainIdentRE.MatchString(name) && !isReserved(name) {
		return name
	}
	return quoteIdentAlways(name)
}

func quoteIdentAlways(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
