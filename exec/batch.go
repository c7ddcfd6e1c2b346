package exec

import (
	"github.com/apache/arrow/go/v15/arrow"
)

// RowKind says what a row means in a changelog, as in Flink.
type RowKind int8

const (
	Insert       RowKind = iota // +I: a new row
	UpdateBefore                // -U: retracts the previous value of an updated row
	UpdateAfter                 // +U: the new value of an updated row
	Delete                      // -D: retracts a row
)

var rowKindNames = [...]string{"+I", "-U", "+U", "-D"}

// String returns Flink's short form: +I, -U, +U or -D.
func (k RowKind) String() string { return rowKindNames[k] }

// IsRetraction reports whether the row removes a previously emitted row.
func (k RowKind) IsRetraction() bool { return k == UpdateBefore || k == Delete }

// Batch is a set of rows with the changelog kind of each.
//
// Ownership: a batch handed to Process or Emit is valid for that call only; whoever keeps
// it past the call calls Retain, and Release when done. A batch returned by Reader.Next
// belongs to the caller.
type Batch struct {
	Rec   arrow.Record
	Kinds []RowKind // nil when every row is an insert
	// Origin says where each row was read, for error messages; nil when not known.
	Origin Origin
	// Splits says which split of its source each row was read from, when the source
	// task reads several side by side; nil otherwise.
	Splits *Splits
}

// Splits is what a source task that reads several splits side by side (a Kafka task's
// partitions, each in its own time order) tells the watermark assigner about a batch,
// so that event time is tracked per split, as Flink's per-partition watermarks: the
// task's watermark is then the least of its splits' that may still bring rows, and a
// split read ahead of another does not make the other's rows late. Immutable once set;
// a Forward exchange and operators that keep every row in order pass it on, others
// drop it.
type Splits struct {
	Of []int32 // the split of each row of the batch: an index into Holding
	// Holding says, for each split of the task, whether it holds the watermark back:
	// it may have rows not read yet. A split at its end, or read up to everything
	// written to it so far, does not (as an idle split in Flink).
	Holding []bool
}

// Len returns the number of rows.
func (b Batch) Len() int {
	if b.Rec == nil {
		return 0
	}
	return int(b.Rec.NumRows())
}

// Kind returns the kind of row i.
func (b Batch) Kind(i int) RowKind {
	if b.Kinds == nil {
		return Insert
	}
	return b.Kinds[i]
}

// Retain adds a reference to the record.
func (b Batch) Retain() {
	if b.Rec != nil {
		b.Rec.Retain()
	}
}

// Release drops a reference to the record.
func (b Batch) Release() {
	if b.Rec != nil {
		b.Rec.Release()
	}
}
