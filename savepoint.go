package streamsql

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec/format"
)

// InspectSavepoint checks the savepoint at path whole and describes it: its format
// version, the job and parallelism it was taken at, and each operator's id, kind,
// tasks, keys and bytes, with what its tasks hold (source positions, sink
// transactions, watermarks).
func InspectSavepoint(path string, w io.Writer) error {
	sp, dir, err := checkpoint.ReadSavepoint(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Savepoint %s\n", dir)
	fmt.Fprintf(w, "  format version %d, job %s, checkpoint %d, taken %s, tasks per stage %s\n",
		sp.Version, sp.Job, sp.Checkpoint, sp.Taken.Format("2006-01-02 15:04:05 MST"), sp.Parallelism)
	var rows [][]string
	for _, op := range sp.Operators {
		keys := ""
		if op.Keyed != "" {
			keys = fmt.Sprint(op.Keys)
		}
		rows = append(rows, []string{op.UID, op.Kind, fmt.Sprint(len(op.Handles)), keys, fmt.Sprint(op.Bytes), handles(op.Handles)})
	}
	format.WriteTable(w, []string{"operator", "kind", "tasks", "keys", "bytes", "task state"}, rows)
	return nil
}

// handles shows what each task of an operator holds, as compact JSON where it is.
func handles(hs [][]byte) string {
	var parts []string
	for i, h := range hs {
		s := "-"
		if len(h) > 0 {
			var v any
			if json.Unmarshal(h, &v) == nil {
				out, _ := json.Marshal(v)
				s = string(out)
			} else {
				s = fmt.Sprintf("%d bytes", len(h))
			}
		}
		if len(s) > 120 {
			s = s[:117] + "..."
		}
		parts = append(parts, fmt.Sprintf("%d: %s", i, s))
	}
	return strings.Join(parts, "; ")
}
