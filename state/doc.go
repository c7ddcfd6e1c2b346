// Package state keeps operators' keyed state on disk in bbolt, namespaced by operator
// UID. Checkpoints are incremental: each writes only the keys changed since the previous
// one, as a delta; a completed checkpoint's deltas are later merged into the base. A
// restore reads the base and the deltas up to the checkpoint restored, and discards the
// deltas of checkpoints that never completed.
package state
