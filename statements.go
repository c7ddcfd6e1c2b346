package streamsql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// The one built-in catalog and database: Flink's default names, so that scripts that name
// them run unchanged.
const (
	defaultCatalog  = "default_catalog"
	defaultDatabase = "default_database"
)

// show answers SHOW CATALOGS, SHOW DATABASES, SHOW CURRENT CATALOG|DATABASE, SHOW VIEWS
// and SHOW [USER] FUNCTIONS (streamsql has no user functions).
func (s *Session) show(st *parser.ShowStmt) error {
	rows := func(names []string) [][]string {
		out := [][]string{}
		for _, n := range names {
			out = append(out, []string{n})
		}
		return out
	}
	switch st.What {
	case "VIEWS":
		return s.printTable([]string{"view name"}, rows(s.catalog.ViewNames()))
	case "FUNCTIONS", "USER FUNCTIONS":
		var names []string
		if st.What == "FUNCTIONS" {
			names = planner.FunctionNames()
		}
		return s.printTable([]string{"function name"}, rows(names))
	case "CATALOGS":
		return s.printTable([]string{"catalog name"}, [][]string{{defaultCatalog}})
	case "DATABASES":
		return s.printTable([]string{"database name"}, [][]string{{defaultDatabase}})
	case "CURRENT CATALOG":
		return s.printTable([]string{"current catalog name"}, [][]string{{defaultCatalog}})
	default:
		return s.printTable([]string{"current database name"}, [][]string{{defaultDatabase}})
	}
}

// use accepts USE and USE CATALOG of the built-in catalog and database only.
func (s *Session) use(st *parser.UseStmt) error {
	want := []string{defaultDatabase}
	switch {
	case st.Catalog:
		want = []string{defaultCatalog}
	case len(st.Name) == 2:
		want = []string{defaultCatalog, defaultDatabase}
	}
	ok := len(st.Name) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.EqualFold(st.Name[i], want[i])
	}
	if !ok {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("%s does not exist: streamsql has one catalog, %s, with one database, %s",
			strings.Join(st.Name, "."), defaultCatalog, defaultDatabase)}
	}
	return nil
}

// showColumns prints a table's or view's columns, as DESCRIBE does.
func (s *Session) showColumns(st *parser.ShowColumnsStmt) error {
	return s.describe(&parser.DescribeStmt{Pos: st.Pos, Name: st.Table})
}

// showCreate prints the CREATE statement of a table or view, as canonical SQL. Options
// that hold secrets are shown masked.
func (s *Session) showCreate(st *parser.ShowCreateStmt) error {
	if !st.View {
		t, ok := s.catalog.Table(st.Name)
		if !ok {
			return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("table %s does not exist", st.Name)}
		}
		_, err := fmt.Fprintln(s.cfg.Out, createTableSQL(t, true))
		return err
	}
	v, ok := s.catalog.View(st.Name)
	if !ok {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("view %s does not exist", st.Name)}
	}
	stmt := &parser.CreateViewStmt{Temporary: v.Temporary, Name: v.Name, Columns: v.Columns, Query: v.Query}
	_, err := fmt.Fprintln(s.cfg.Out, stmt.String())
	return err
}

// createTableSQL is the statement that creates t, its secret options masked when mask
// is set (SHOW CREATE TABLE) and kept otherwise (the base of CREATE TABLE ... LIKE t).
func createTableSQL(t *planner.Table, mask bool) string {
	var b strings.Builder
	b.WriteString("CREATE ")
	if t.Temporary {
		b.WriteString("TEMPORARY ")
	}
	fmt.Fprintf(&b, "TABLE `%s` (\n", t.Name)
	var lines []string
	for _, c := range t.Columns {
		if c.Computed != nil {
			lines = append(lines, fmt.Sprintf("  `%s` AS %s", c.Name, c.ComputedSQL))
		} else if c.IsMetadata() {
			lines = append(lines, fmt.Sprintf("  `%s` %s %s", c.Name, c.Type, metadataSQL(c)))
		} else {
			lines = append(lines, fmt.Sprintf("  `%s` %s", c.Name, c.Type))
		}
	}
	if t.Watermark != nil {
		lines = append(lines, fmt.Sprintf("  WATERMARK FOR `%s` AS %s", t.Watermark.Column, t.Watermark.SQL))
	}
	if len(t.PrimaryKey) > 0 {
		lines = append(lines, fmt.Sprintf("  PRIMARY KEY (`%s`) NOT ENFORCED", strings.Join(t.PrimaryKey, "`, `")))
	}
	b.WriteString(strings.Join(lines, ",\n") + "\n)")
	if len(t.PartitionKeys) > 0 {
		fmt.Fprintf(&b, " PARTITIONED BY (`%s`)", strings.Join(t.PartitionKeys, "`, `"))
	}
	b.WriteString(" WITH (\n")
	keys := make([]string, 0, len(t.Options))
	for k := range t.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		v := t.Options[k]
		if mask && secretOption(k) {
			v = "******"
		}
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  '%s' = '%s'%s\n", k, strings.ReplaceAll(v, "'", "''"), sep)
	}
	b.WriteString(")")
	return b.String()
}

// metadataSQL is a metadata column's METADATA [FROM 'key'] [VIRTUAL] clause; the key
// is left out when it is the column's name.
func metadataSQL(c planner.TableColumn) string {
	s := "METADATA"
	if c.Metadata != c.Name {
		s += " FROM '" + strings.ReplaceAll(c.Metadata, "'", "''") + "'"
	}
	if c.Virtual {
		s += " VIRTUAL"
	}
	return s
}

func secretOption(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "password") || strings.Contains(k, "secret") || strings.Contains(k, "token") || strings.Contains(k, "sasl.jaas")
}

// listSettings answers SET alone: the session's settings, by key.
func (s *Session) listSettings() error {
	keys := make([]string, 0, len(s.settings))
	for k := range s.settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([][]string, len(keys))
	for i, k := range keys {
		v := s.settings[k]
		if secretOption(k) {
			v = "******"
		}
		rows[i] = []string{k, v}
	}
	return s.printTable([]string{"key", "value"}, rows)
}

// reset restores one setting, or all of them, to the session's initial value.
func (s *Session) reset(st *parser.ResetStmt) error {
	restore := func(k string) {
		if v, ok := s.cfg.Settings[k]; ok {
			s.settings[k] = v
		} else {
			delete(s.settings, k)
		}
		if k == "table.local-time-zone" {
			s.cfg.Location = s.location
		}
	}
	if st.Key != "" {
		restore(st.Key)
	} else {
		for k := range s.settings {
			restore(k)
		}
	}
	s.info("Session property has been reset.")
	return nil
}

// createFunction refuses user-defined functions: they are JVM (or Python) classes.
func createFunction(st *parser.CreateFunctionStmt) error {
	lang := st.Language
	if lang == "" {
		lang = "JAVA"
	}
	return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("CREATE FUNCTION %s: %s functions cannot run here (streamsql runs no JVM or Python); use the built-in functions",
		strings.Join(st.Name, "."), strings.ToUpper(lang[:1])+strings.ToLower(lang[1:]))}
}
