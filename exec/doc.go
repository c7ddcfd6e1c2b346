// Package exec is the runtime: batches and their changelog kinds, the operator and
// reader interfaces, and the tasks that run an operator DAG over channels.
//
// Subpackages hold the parts that run inside tasks: expr (vectorized expression
// evaluation over Arrow arrays), ops (filter, project, aggregate), format (record
// formats) and connector (sources and sinks).
//
// Ownership rule for Arrow memory: a Batch handed to Process or Emit is valid for that
// call only; whoever keeps it longer calls Retain and later Release. A batch returned by
// Reader.Next belongs to the caller, who releases it. Sources and operators that build
// batches flat out take their buffers from a BufferPool, to which they come back on the
// last Release: a string kept from a batch without a copy is overwritten.
//
// A batch may say where its rows were read (Origin), so that an expression failing on
// a row names it (EvalError); the origin travels with the batch through the operators
// of the source's task and stays behind at an exchange. A task with many inputs learns
// which has a message from one ready queue, and combines their watermarks with a valve,
// so each message costs the same whatever the parallelism.
// A running graph counts, per batch, the rows into and out of each operator, its
// tasks' busy and back-pressured time and their watermarks (Metrics).
package exec
