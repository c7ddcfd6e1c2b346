package connector

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
)

// fileState is a FileReader's snapshot: with the header, the 'path' option, the
// files of this task read to their end, the file being read ("" between files) with
// the byte offset and line number of its next record, and the files listed but not yet
// read, in the order they will be read. Files are named relative to a directory path
// (by the file's own name for a file path), e.g.
//
//	{"version":1,"connector":"filesystem","table":"logs","task":0,"tasks":2,
//	 "path":"/data/logs","done":["a.csv"],"file":"c.csv","offset":4096,"line":120,
//	 "pending":["e.csv"]}
type fileState struct {
	stateHeader
	Path    string   `json:"path"`
	Done    []string `json:"done"`
	File    string   `json:"file,omitempty"`
	Offset  int64    `json:"offset"`
	Line    int64    `json:"line"`
	Pending []string `json:"pending"`
}

func (r *FileReader) header() stateHeader { return newStateHeader("filesystem", r.table, r.split) }

// Snapshot returns the position after the last batch returned; see exec.Snapshotter.
func (r *FileReader) Snapshot(context.Context, int64) ([]byte, error) {
	if r.closed {
		return nil, errClosed
	}
	s := fileState{stateHeader: r.header(), Path: r.path, Done: names(r.done), Pending: names(r.pending)}
	if r.f != nil {
		s.File, s.Offset, s.Line = filepath.Base(r.pos.Path), r.pos.Offset, r.pos.Line
	}
	return json.Marshal(s)
}

func names(paths []string) []string {
	n := make([]string, len(paths))
	for i, p := range paths {
		n[i] = filepath.Base(p)
	}
	return n
}

// Restore makes a reader that has not been read yet continue from a snapshot of the
// same table, path and task: it reads the rest of the file being read and then the
// files pending; files read are never read again, and a monitored directory's new
// files are picked up. See exec.Restorer.
func (r *FileReader) Restore(state []byte) error {
	if r.closed {
		return errClosed
	}
	h := r.header()
	var s fileState
	if err := decodeState(state, h, &s); err != nil {
		return err
	}
	if s.Path != r.path {
		return h.Err("the state is of path %s, not %s", s.Path, r.path)
	}
	if s.Offset < 0 || s.Line < 0 || s.Line > s.Offset || (s.File == "" && s.Offset != 0) {
		return h.Err("corrupt state: offset %d, line %d", s.Offset, s.Line)
	}
	done, err := r.paths(h, s.Done)
	if err != nil {
		return err
	}
	pending, err := r.paths(h, s.Pending)
	if err != nil {
		return err
	}
	var at []string
	if s.File != "" {
		if at, err = r.paths(h, []string{s.File}); err != nil {
			return err
		}
		if st, err := os.Stat(at[0]); err != nil {
			return r.err(err)
		} else if st.Size() < s.Offset {
			return h.Err("%s has %d bytes, fewer than its position %d: it changed", at[0], st.Size(), s.Offset)
		}
	}
	if r.f != nil {
		r.closeFile()
	}
	r.done, r.pending, r.seen = done, pending, map[string]bool{}
	for _, list := range [][]string{done, pending, at} {
		for _, p := range list {
			r.seen[p] = true
		}
	}
	if len(at) > 0 {
		if err := r.openAt(FilePosition{Path: at[0], Offset: s.Offset, Line: s.Line}); err != nil {
			return err
		}
	}
	if r.monitor > 0 {
		return r.list()
	}
	return nil
}

// paths turns the names of a snapshot into the paths of files under r.path.
func (r *FileReader) paths(h stateHeader, names []string) ([]string, error) {
	paths := make([]string, len(names))
	for i, n := range names {
		switch {
		case n == "" || n == "." || n == ".." || filepath.Base(n) != n:
			return nil, h.Err("corrupt state: %q is not a file name", n)
		case r.dir:
			paths[i] = filepath.Join(r.path, n)
		case n == filepath.Base(r.path):
			paths[i] = r.path
		default:
			return nil, h.Err("the state names file %s, not %s", n, r.path)
		}
	}
	return paths, nil
}
