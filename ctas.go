package streamsql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// mergeLike resolves CREATE TABLE ... LIKE base: the statement that creates base,
// merged with st by st's like options.
func (s *Session) mergeLike(st *parser.CreateTableStmt) (*parser.CreateTableStmt, error) {
	src, ok := s.catalog.Table(st.Like.Table)
	if !ok {
		if _, isView := s.catalog.View(st.Like.Table); isView {
			return nil, &planner.Error{Pos: st.Like.Pos, Msg: fmt.Sprintf("LIKE takes a table, and %s is a view", st.Like.Table)}
		}
		return nil, &planner.Error{Pos: st.Like.Pos, Msg: fmt.Sprintf("table %s of LIKE does not exist", st.Like.Table)}
	}
	base, err := parseCreateTable(createTableSQL(src, false))
	if err != nil {
		return nil, fmt.Errorf("LIKE %s: %w", src.Name, err)
	}
	return planner.MergeLike(base, st)
}

// parseCreateTable parses the one CREATE TABLE statement of sql.
func parseCreateTable(sql string) (*parser.CreateTableStmt, error) {
	script, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(script.Stmts) != 1 {
		return nil, fmt.Errorf("%d statements where one CREATE TABLE was expected", len(script.Stmts))
	}
	ct, ok := script.Stmts[0].(*parser.CreateTableStmt)
	if !ok {
		return nil, fmt.Errorf("%T where a CREATE TABLE was expected", script.Stmts[0])
	}
	return ct, nil
}

// createTableAs runs CREATE [OR REPLACE] TABLE t [(...)] WITH (...) AS query: t is
// created with the query's columns (a column declared with a query column's name
// gives its type; other declared columns come first, NULL), then INSERT INTO t query
// starts. If the INSERT cannot start, t is dropped again (and a replaced table comes
// back). With IF NOT EXISTS and t there, nothing happens.
func (s *Session) createTableAs(p *planner.Planner, st *parser.CreateTableStmt, settings job.Settings) error {
	if _, exists := s.catalog.Table(st.Name); exists && st.IfNotExists {
		s.info("Table exists: nothing is created or inserted.")
		return nil
	}
	query, err := p.PlanQuery(st.Query)
	if err != nil {
		return err
	}
	def, columns, err := ctasTable(st, query.Schema())
	if err != nil {
		return err
	}
	t, err := planner.BindTable(def)
	if err != nil {
		return err
	}
	var replaced *planner.Table
	if old, ok := s.catalog.Table(st.Name); ok && st.OrReplace {
		replaced = old
		if err := s.catalog.Drop(st.Name, false); err != nil {
			return err
		}
	}
	if err := s.catalog.AddTable(t); err != nil {
		if errors.Is(err, planner.ErrExists) {
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("table or view %s already exists", st.Name)}
		}
		return err
	}
	undo := func() {
		_ = s.catalog.Drop(st.Name, false)
		if replaced != nil {
			_ = s.catalog.AddTable(replaced)
		}
	}
	plan, err := p.PlanInsert(&parser.InsertStmt{Pos: st.Pos, Table: st.Name, Columns: columns, Query: st.Query})
	if err != nil {
		undo()
		return err
	}
	if err := s.startJob(plan, settings); err != nil {
		undo()
		return err
	}
	return nil
}

// ctasTable is the CREATE TABLE of a CTAS: its declared columns that the query does not
// produce first, then the query's columns (a declared one's type replacing the
// query's), the declared key, watermark and options. columns lists what the INSERT
// fills when there are declared columns of its own, nil otherwise.
func ctasTable(st *parser.CreateTableStmt, schema planner.Schema) (*parser.CreateTableStmt, []string, error) {
	var b strings.Builder
	b.WriteString("CREATE TABLE `t` (")
	for i, c := range schema {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "`%s` %s", strings.ReplaceAll(c.Name, "`", "``"), c.Type)
	}
	b.WriteString(")")
	fromQuery, err := parseCreateTable(b.String())
	if err != nil {
		return nil, nil, &planner.Error{Pos: st.Query.Pos, Msg: fmt.Sprintf("the query's columns cannot make a table: %v", err)}
	}
	declared := map[string]*parser.ColumnDef{}
	for _, c := range st.Columns {
		if c.Computed != nil {
			return nil, nil, &planner.Error{Pos: c.Pos, Msg: "CREATE TABLE ... AS SELECT takes no computed columns: compute them in the query"}
		}
		declared[strings.ToLower(c.Name)] = c
	}
	def := *st
	def.Query, def.OrReplace, def.IfNotExists, def.Columns = nil, false, false, nil
	inQuery := map[string]bool{}
	for _, c := range fromQuery.Columns {
		inQuery[strings.ToLower(c.Name)] = true
	}
	var columns []string
	for _, c := range st.Columns {
		if !inQuery[strings.ToLower(c.Name)] {
			def.Columns = append(def.Columns, c)
		}
	}
	for _, c := range fromQuery.Columns {
		if d, ok := declared[strings.ToLower(c.Name)]; ok {
			c = d
		}
		def.Columns = append(def.Columns, c)
		columns = append(columns, c.Name)
	}
	if len(def.Columns) == len(fromQuery.Columns) {
		columns = nil
	}
	return &def, columns, nil
}
