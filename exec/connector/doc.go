// Package connector talks to external systems: it opens a table's source as an
// exec.Reader (datagen, filesystem, socket) and its sink as an exec.Operator (print,
// blackhole, filesystem), chosen by the table's 'connector' option and configured by
// its WITH options, which are validated as Flink validates them (an unknown key is an
// error). Records are converted by package format; this package owns the I/O: files,
// sockets, pacing, byte offsets and line numbers. The engine calls OpenSource and
// OpenSink with a spec; there is no registry.
package connector
