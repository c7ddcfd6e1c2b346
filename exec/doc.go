// Package exec is the runtime: batches and their changelog kinds, the operator and
// reader interfaces, and the tasks that run an operator DAG over channels.
//
// Subpackages hold the parts that run inside tasks: expr (vectorized expression
// evaluation over Arrow arrays), ops (filter, project, aggregate), format (record
// formats) and connector (sources and sinks).
//
// Ownership rule for Arrow memory: a Batch handed to Process or Emit is valid for that
// call only; whoever keeps it longer calls Retain and later Release. A batch returned by
// Reader.Next belongs to the caller, who releases it.
//
// A running graph counts, per batch, the rows into and out of each operator, its
// tasks' busy and back-pressured time and their watermarks (Metrics).
package exec
