package streamsql

import (
	"bufio"
	"strings"

	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// showTables prints the names of the tables and views.
func (s *Session) showTables() error {
	var rows [][]string
	for _, n := range s.catalog.Names() {
		rows = append(rows, []string{n})
	}
	return s.printTable([]string{"table name"}, rows)
}

// describe prints a table's or view's columns as Flink's DESCRIBE does.
func (s *Session) describe(st *parser.DescribeStmt) error {
	header := []string{"name", "type", "null", "key", "extras", "watermark"}
	var rows [][]string
	if t, ok := s.catalog.Table(st.Name); ok {
		for _, c := range t.Columns {
			null, key, extras, wm := "TRUE", "", "", ""
			if c.Type.NotNull {
				null = "FALSE"
			}
			for _, k := range t.PrimaryKey {
				if strings.EqualFold(k, c.Name) {
					key = "PRI(" + strings.Join(t.PrimaryKey, ", ") + ")"
				}
			}
			if c.Computed != nil {
				extras = "AS " + c.ComputedSQL
			}
			if c.IsMetadata() {
				extras = metadataSQL(c)
			}
			if t.Watermark != nil && strings.EqualFold(t.Watermark.Column, c.Name) {
				wm = t.Watermark.SQL
			}
			rows = append(rows, []string{c.Name, c.Type.Nullable().String(), null, key, extras, wm})
		}
		return s.printTable(header, rows)
	}
	if v, ok := s.catalog.View(st.Name); ok {
		for _, c := range v.Schema {
			null := "TRUE"
			if c.Type.NotNull {
				null = "FALSE"
			}
			rows = append(rows, []string{c.Name, c.Type.Nullable().String(), null, "", "", ""})
		}
		return s.printTable(header, rows)
	}
	return &planner.Error{Pos: st.Pos, Msg: "unknown table or view `" + st.Name + "`"}
}

func (s *Session) printTable(header []string, rows [][]string) error {
	w := bufio.NewWriter(s.cfg.Out)
	format.WriteTable(w, header, rows)
	return w.Flush()
}
