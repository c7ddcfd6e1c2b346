// Package connector talks to external systems: it opens a table's source as an
// exec.Reader (datagen, filesystem, socket) and its sink as an exec.Operator (print,
// blackhole, filesystem), chosen by the table's 'connector' option and configured by
// its WITH options, which are validated as Flink validates them (an unknown key is an
// error). Records are converted by package format; this package owns the I/O: files,
// sockets, pacing, byte offsets and line numbers. The engine calls OpenSource and
// OpenSink with a spec; there is no registry.
//
// The datagen and filesystem sources are replayable: their readers snapshot their
// position for a checkpoint (exec.Snapshotter) and a new reader restored from it
// (exec.Restorer) continues with exactly the rows that followed (state.go has the
// encoding). They are also Parallelizable: several tasks, each given its
// SourceSpec.Task, read disjoint shares of the rows (split.go). The socket source is
// neither.
//
// A lookup join reads a table through an exec.Lookuper that OpenLookup opens: the
// filesystem connector's reads the table whole (lookup.go); the registry's Lookups add
// the embedded table's and PostgreSQL's. ReadLookupConfig reads Flink's lookup.*
// options, which any table accepts.
package connector
