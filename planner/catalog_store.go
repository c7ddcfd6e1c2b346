package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/parser"
)

// View is a named query registered with CREATE VIEW. It is planned again wherever it is
// used, so it always reads the current tables.
type View struct {
	Name      string
	Columns   []string // explicit column names, or nil
	Query     *parser.Query
	Schema    Schema
	Temporary bool
}

// Catalog holds a session's tables and views. Names are case-insensitive.
type Catalog struct {
	tables map[string]*Table
	views  map[string]*View
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*Table{}, views: map[string]*View{}}
}

// Table returns the table called name.
func (c *Catalog) Table(name string) (*Table, bool) {
	t, ok := c.tables[strings.ToLower(name)]
	return t, ok
}

// View returns the view called name.
func (c *Catalog) View(name string) (*View, bool) {
	v, ok := c.views[strings.ToLower(name)]
	return v, ok
}

func (c *Catalog) exists(name string) bool {
	_, t := c.tables[strings.ToLower(name)]
	_, v := c.views[strings.ToLower(name)]
	return t || v
}

// AddTable registers t; it fails if the name is taken.
func (c *Catalog) AddTable(t *Table) error {
	if c.exists(t.Name) {
		return fmt.Errorf("%w: %s", ErrExists, t.Name)
	}
	c.tables[strings.ToLower(t.Name)] = t
	return nil
}

// AddView registers v; it fails if the name is taken.
func (c *Catalog) AddView(v *View) error {
	if c.exists(v.Name) {
		return fmt.Errorf("%w: %s", ErrExists, v.Name)
	}
	c.views[strings.ToLower(v.Name)] = v
	return nil
}

// Drop removes the table (view false) or view called name.
func (c *Catalog) Drop(name string, view bool) error {
	key := strings.ToLower(name)
	if view {
		if _, ok := c.views[key]; !ok {
			return fmt.Errorf("%w: view %s", ErrNotFound, name)
		}
		delete(c.views, key)
		return nil
	}
	if _, ok := c.tables[key]; !ok {
		return fmt.Errorf("%w: table %s", ErrNotFound, name)
	}
	delete(c.tables, key)
	return nil
}

// ViewNames returns the names of every view, sorted.
func (c *Catalog) ViewNames() []string {
	var names []string
	for _, v := range c.views {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return names
}

// Names returns the names of every table and view, sorted.
func (c *Catalog) Names() []string {
	var names []string
	for _, t := range c.tables {
		names = append(names, t.Name)
	}
	for _, v := range c.views {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return names
}
