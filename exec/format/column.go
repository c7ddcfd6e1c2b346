package format

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/streamsql/streamsql/exec/internal/arrowbuf"
	"github.com/streamsql/streamsql/planner"
)

// newColWriter returns the writer of a column of kind k straight into Arrow buffers, or
// nil when k has none (its values go through an Arrow builder).
func newColWriter(mem memory.Allocator, k planner.Kind, dtype arrow.DataType) *arrowbuf.Writer {
	switch k {
	case planner.BigInt, planner.Double, planner.Timestamp, planner.TimestampLTZ:
		return arrowbuf.NewWriter(mem, dtype, 8)
	case planner.Int, planner.Date:
		return arrowbuf.NewWriter(mem, dtype, 4)
	case planner.String, planner.Binary:
		return arrowbuf.NewWriter(mem, dtype, 0)
	}
	return nil
}
