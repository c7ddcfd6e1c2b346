// Package state keeps operators' keyed state on disk in bbolt, namespaced by operator
// UID. Checkpoints are incremental: each writes only the keys changed since the previous
// one, as a delta; the deltas of checkpoints no longer restored are later folded into
// sorted runs, a log-structured merge. A restore reads the runs and the deltas up to the
// checkpoint restored, and discards the deltas of checkpoints that never completed.
package state
