package connector

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/format"
	"github.com/streamsql/streamsql/planner"
)

// partReader fills the partition columns of a partitioned table's rows from the
// directory names of the files they come from. The files hold the other columns.
type partReader struct {
	part   *partitioning
	data   []int          // the physical columns the files hold, in order
	schema planner.Schema // of the partition columns
	mem    memory.Allocator
	loc    *time.Location

	dir  string       // the directory of the cached values
	vals arrow.Record // one row: the partition values of dir
}

func newPartReader(o *Options, t *planner.Table, mem memory.Allocator, loc *time.Location) (*partReader, planner.Schema, error) {
	phys := t.PhysicalSchema()
	names := make([]string, len(phys))
	for i, c := range phys {
		names[i] = c.Name
	}
	part, err := newPartitioning(o, t, names, loc)
	if err != nil || part == nil {
		return nil, phys, err
	}
	pr := &partReader{part: part, mem: mem, loc: loc}
	var data planner.Schema
	for i, c := range phys {
		if part.isKey(i) {
			continue
		}
		pr.data = append(pr.data, i)
		data = append(data, c)
	}
	for _, i := range part.cols {
		pr.schema = append(pr.schema, phys[i])
	}
	return pr, data, nil
}

// list returns the files under root that sit in a partition directory of the table,
// one key=value level per partition column; hidden names ('.' or '_' first) are
// skipped at every level.
func (pr *partReader) list(root string) ([]string, error) {
	var found []string
	depth := len(pr.part.keys)
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		level := strings.Count(rel, string(filepath.Separator)) + 1
		if e.IsDir() {
			if level > depth {
				return filepath.SkipDir
			}
			return nil
		}
		if level != depth+1 {
			return nil
		}
		if _, _, ok := pr.part.parseDir(filepath.ToSlash(filepath.Dir(rel))); !ok {
			return nil
		}
		if !e.Type().IsRegular() {
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				return nil
			}
		}
		found = append(found, p)
		return nil
	})
	return found, err
}

// nullValue stands for NULL in the CSV line values decodes: it is unquoted, and every
// value is quoted.
const nullValue = `\N`

// values returns a one-row record of the partition values of the file at path, a
// relative name under root.
func (pr *partReader) values(table, rel string) (arrow.Record, error) {
	dir := filepath.ToSlash(filepath.Dir(rel))
	if pr.vals != nil && pr.dir == dir {
		return pr.vals, nil
	}
	vals, null, ok := pr.part.parseDir(dir)
	if !ok {
		return nil, &tableError{table: table, msg: "file " + rel + " is not in a partition directory of the table", kind: ErrInvalidOption}
	}
	var line []byte
	for i, v := range vals {
		if i > 0 {
			line = append(line, ',')
		}
		if null[i] {
			line = append(line, nullValue...)
		} else {
			line = append(line, '"')
			line = append(line, strings.ReplaceAll(v, `"`, `""`)...)
			line = append(line, '"')
		}
	}
	dec, err := format.NewDecoder("csv", pr.schema, pr.mem, map[string]string{"csv.null-literal": nullValue}, pr.loc)
	if err != nil {
		return nil, wrapTable(table, err)
	}
	defer dec.Release()
	if err := dec.Decode(line, 1); err != nil {
		return nil, &tableError{table: table, msg: "partition directory " + dir + ": " + err.Error(), kind: ErrInvalidOption}
	}
	rec := dec.Flush()
	pr.release()
	pr.dir, pr.vals = dir, rec
	return rec, nil
}

// fill returns rec (the data columns of rows from the file rel) with the partition
// columns added, in the table's physical order. It takes rec's reference.
func (pr *partReader) fill(table, rel string, rec arrow.Record) (arrow.Record, error) {
	defer rec.Release()
	vals, err := pr.values(table, rel)
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	sel := make([]int32, n)
	width := len(pr.data) + len(pr.part.cols)
	cols := make([]arrow.Array, width)
	fields := make([]arrow.Field, width)
	for j, i := range pr.data {
		cols[i], fields[i] = rec.Column(j), rec.Schema().Field(j)
		cols[i].Retain()
	}
	for j, i := range pr.part.cols {
		cols[i], fields[i] = exec.Take(pr.mem, vals.Column(j), sel), vals.Schema().Field(j)
		fields[i].Name = pr.part.keys[j]
	}
	out := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

func (pr *partReader) release() {
	if pr.vals != nil {
		pr.vals.Release()
		pr.vals = nil
	}
}
