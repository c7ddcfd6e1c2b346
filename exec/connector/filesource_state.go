package connector

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/planner"
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
	Path   string   `json:"path"`
	Done   []string `json:"done"`
	File   string   `json:"file,omitempty"`
	Offset int64    `json:"offset"`
	Line   int64    `json:"line"`
	// End, in a file split by ranges, is where this task's range of the file ends;
	// 0 (as in snapshots of earlier builds) means the task's own share of the file.
	End     int64    `json:"end,omitempty"`
	Pending []string `json:"pending"`
	// Resume, for a source restored at another parallelism, are files other tasks had
	// begun, each with the offset and line of its next record: read before Pending.
	Resume []fileAt `json:"resume,omitempty"`
}

// fileAt is a file begun, and where its next record starts; or, resuming a byte
// range of a file split by ranges, where the range starts (Align: the first record
// starting there) and ends (see FilePosition).
type fileAt struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Line   int64  `json:"line"`
	End    int64  `json:"end,omitempty"`
	Align  bool   `json:"align,omitempty"`
}

// rescaleFiles redistributes the snapshots of a filesystem table's tasks over tasks
// new ones: each file, read, begun or pending, goes to the new task that owns it (see
// split), with where its old task was in it.
func rescaleFiles(t *planner.Table, states [][]byte, tasks int) ([][]byte, error) {
	probe, err := openFileSource(SourceSpec{Table: t, Mem: memory.DefaultAllocator, Tasks: 1, BatchSize: 1, Now: time.Now, Location: time.UTC})
	if err != nil {
		return nil, err
	}
	probe.Close()
	if probe.splitsByRanges(len(states)) || probe.splitsByRanges(tasks) {
		return rescaleRanges(t, probe, states, tasks)
	}
	type file struct {
		state string // done, begun or pending
		at    fileAt
	}
	files := map[string]file{}
	var path string
	for i, data := range states {
		var s fileState
		if err := decodeState(data, stateHeader{Version: stateVersion, Connector: "filesystem", Table: t.Name, Task: i, Tasks: len(states)}, &s); err != nil {
			return nil, err
		}
		path = s.Path
		for _, n := range s.Done {
			files[n] = file{state: "done"}
		}
		for _, n := range s.Pending {
			files[n] = file{state: "pending"}
		}
		for _, at := range append(s.Resume, fileAt{s.File, s.Offset, s.Line, s.End, false}) {
			if at.File != "" {
				files[at.File] = file{state: "begun", at: at}
			}
		}
	}
	if path != probe.path {
		return nil, newStateHeader("filesystem", t.Name, split{0, 1}).Err("the state is of path %s, not %s", path, probe.path)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([][]byte, tasks)
	for task := range out {
		sp := split{task: task, tasks: tasks}
		s := fileState{stateHeader: newStateHeader("filesystem", t.Name, sp), Path: path, Done: []string{}, Pending: []string{}}
		for i, n := range names {
			owns := sp.ownsIndex(i)
			if probe.dir && probe.monitor > 0 {
				owns = sp.ownsName(n)
			}
			if !owns {
				continue
			}
			switch f := files[n]; f.state {
			case "done":
				s.Done = append(s.Done, n)
			case "pending":
				s.Pending = append(s.Pending, n)
			default:
				s.Resume = append(s.Resume, f.at)
			}
		}
		if out[task], err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rescaleRanges redistributes the snapshots of a source whose files are split by
// byte ranges before or after: what each old task has left of its range of a file
// becomes a range that one new task resumes, and the files no old task began, split
// by ranges anew, are every new task's.
func rescaleRanges(t *planner.Table, probe *FileReader, states [][]byte, tasks int) ([][]byte, error) {
	oldRanges := probe.splitsByRanges(len(states))
	var path string
	var pieces []fileAt
	started := map[string]bool{} // files an old task began or finished: their pieces cover them
	var untouched []string       // files no old task began
	pendingIn := map[string]int{}
	for i, data := range states {
		var s fileState
		if err := decodeState(data, stateHeader{Version: stateVersion, Connector: "filesystem", Table: t.Name, Task: i, Tasks: len(states)}, &s); err != nil {
			return nil, err
		}
		path = s.Path
		// end is old task i's range of a file: all of it when files were read whole.
		end := func(name string) (lo, hi int64, err error) {
			p := path
			if probe.dir {
				p = filepath.Join(path, name)
			}
			st, err := os.Stat(p)
			if err != nil {
				return 0, 0, err
			}
			if !oldRanges {
				return 0, st.Size(), nil
			}
			lo, hi = rangeOf(st.Size(), i, len(states))
			return lo, hi, nil
		}
		for _, n := range s.Done {
			started[n] = true
		}
		for _, at := range append(s.Resume, fileAt{s.File, s.Offset, s.Line, s.End, false}) {
			if at.File == "" {
				continue
			}
			if at.End == 0 {
				_, hi, err := end(at.File)
				if err != nil {
					return nil, err
				}
				at.End = hi
			}
			started[at.File] = true
			pieces = append(pieces, at)
		}
		for _, n := range s.Pending {
			pendingIn[n]++
			if !oldRanges {
				continue
			}
			lo, hi, err := end(n)
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, fileAt{File: n, Offset: lo, Align: true, End: hi})
		}
	}
	if path != probe.path {
		return nil, newStateHeader("filesystem", t.Name, split{0, 1}).Err("the state is of path %s, not %s", path, probe.path)
	}
	if oldRanges {
		for n := range pendingIn {
			started[n] = true // its old ranges are pieces
		}
	} else {
		for n := range pendingIn {
			untouched = append(untouched, n)
		}
	}
	slices.Sort(untouched)
	done := make([]string, 0, len(started))
	for n := range started {
		done = append(done, n)
	}
	slices.Sort(done)
	newRanges := probe.splitsByRanges(tasks)
	out := make([][]byte, tasks)
	for task := range out {
		sp := split{task: task, tasks: tasks}
		s := fileState{stateHeader: newStateHeader("filesystem", t.Name, sp), Path: path, Done: done, Pending: []string{}}
		for i, n := range untouched {
			if newRanges || sp.ownsIndex(i) {
				s.Pending = append(s.Pending, n)
			}
		}
		for i, at := range pieces {
			if i%tasks == task {
				s.Resume = append(s.Resume, at)
			}
		}
		var err error
		if out[task], err = json.Marshal(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *FileReader) header() stateHeader { return newStateHeader("filesystem", r.table, r.split) }

// Snapshot returns the position after the last batch returned; see exec.Snapshotter.
func (r *FileReader) Snapshot(context.Context, int64) ([]byte, error) {
	if r.closed {
		return nil, errClosed
	}
	s := fileState{stateHeader: r.header(), Path: r.path, Done: r.names(r.done), Pending: r.names(r.pending)}
	for _, at := range r.resume {
		s.Resume = append(s.Resume, fileAt{r.name(at.Path), at.Offset, at.Line, at.End, at.Align})
	}
	if r.f != nil {
		s.File, s.Offset, s.Line, s.End = r.name(r.pos.Path), r.pos.Offset, r.pos.Line, r.pos.End
	}
	return json.Marshal(s)
}

// name is how a snapshot names the file at path p: by its name, or for a partitioned
// table by its path under the table's directory (dt=2024-05-06/part-0.csv).
func (r *FileReader) name(p string) string {
	if r.part != nil {
		if rel, err := filepath.Rel(r.path, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(p)
}

func (r *FileReader) names(paths []string) []string {
	n := make([]string, len(paths))
	for i, p := range paths {
		n[i] = r.name(p)
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
	if s.Offset < 0 || s.Line < 0 || s.Line > s.Offset || s.End < 0 || (s.File == "" && s.Offset != 0) {
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
	var resume []FilePosition
	var begun []string
	for _, f := range s.Resume {
		paths, err := r.paths(h, []string{f.File})
		if err != nil {
			return err
		}
		if f.Offset < 0 || f.Line < 0 || f.Line > f.Offset || f.End < 0 || (f.Align && f.Line != 0) {
			return h.Err("corrupt state: %s at offset %d, line %d", f.File, f.Offset, f.Line)
		}
		if st, err := os.Stat(paths[0]); err != nil {
			return r.err(err)
		} else if st.Size() < f.Offset {
			return h.Err("%s has %d bytes, fewer than its position %d: it changed", paths[0], st.Size(), f.Offset)
		}
		resume = append(resume, FilePosition{Path: paths[0], Offset: f.Offset, Line: f.Line, End: f.End, Align: f.Align})
		begun = append(begun, paths[0])
	}
	if r.f != nil {
		r.closeFile()
	}
	r.done, r.pending, r.resume, r.seen = done, pending, resume, map[string]bool{}
	for _, list := range [][]string{done, pending, at, begun} {
		for _, p := range list {
			r.seen[p] = true
		}
	}
	if len(at) > 0 {
		if err := r.openAt(FilePosition{Path: at[0], Offset: s.Offset, Line: s.Line, End: s.End}); err != nil {
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
		case r.part != nil && filepath.IsLocal(filepath.FromSlash(n)):
			paths[i] = filepath.Join(r.path, filepath.FromSlash(n))
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
