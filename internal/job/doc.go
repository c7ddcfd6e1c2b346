// Package job builds and runs jobs. A job is a planned statement (an INSERT INTO or a
// SELECT) turned into an operator graph, with its name, the fingerprint of what decides
// its state and output, and its settings parsed once, when the statement ran. Running
// it takes checkpoints, restores the latest usable one after a failure or a restart of
// the process, restarts by the restart strategy unless the error is one no restart can
// cure, and stops gracefully on request with a final checkpoint. Metrics gathers its live
// figures: the graph's counters by operator and task, its checkpoints, and its sources'
// lag.
package job
