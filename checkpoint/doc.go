// Package checkpoint holds the fault-tolerance machinery of a job: the coordinator that
// triggers checkpoints and decides when they complete, fail or time out (a
// deterministic state machine driven by ticks and acknowledgements), the durable
// storage of checkpoint metadata with checksums, and the restart strategies that decide
// whether and when a failed job restarts.
package checkpoint
