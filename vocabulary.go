package streamsql

import (
	"slices"
	"strings"

	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/planner"
)

// Vocabulary is what the shell completes: the session's tables and views with their
// columns, the built-in functions and the SET keys.
type Vocabulary struct {
	Tables    []string            // tables and views, sorted
	Columns   map[string][]string // by lower-case table or view name
	Functions []string            // sorted
	Keys      []string            // SET keys, sorted
}

// Vocabulary returns the names the session knows now. It reads the catalog: call it
// between statements, not while one runs.
func (s *Session) Vocabulary() Vocabulary {
	v := Vocabulary{Tables: s.catalog.Names(), Columns: map[string][]string{}}
	for _, name := range v.Tables {
		var cols []string
		if t, ok := s.catalog.Table(name); ok {
			for _, c := range t.Columns {
				cols = append(cols, c.Name)
			}
		} else if view, ok := s.catalog.View(name); ok {
			cols = columnNames(view.Schema)
		}
		v.Columns[strings.ToLower(name)] = cols
	}
	seen := map[string]bool{}
	for _, f := range planner.Functions() {
		for _, n := range f.Names {
			if !seen[n] {
				seen[n] = true
				v.Functions = append(v.Functions, n)
			}
		}
	}
	slices.Sort(v.Functions)
	v.Keys = append(append(v.Keys, job.EngineKeys...), job.IgnoredKeys...)
	slices.Sort(v.Keys)
	v.Keys = slices.Compact(v.Keys)
	return v
}
