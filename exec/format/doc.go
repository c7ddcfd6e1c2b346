// Package format converts records between bytes and Arrow: it decodes lines of Flink's
// header-less csv format and of its json format (one object a line, nested objects and
// arrays read into ROW, ARRAY and MAP columns), the change messages of debezium-json,
// canal-json and maxwell-json (rows with their kinds, +I, -U/+U, -D: Decoder.Kinds, and
// with NewMetadataDecoder the formats' metadata beside them), and
// raw records into Arrow records of a table's physical schema, encodes batches in each
// of those formats and as Flink's changelog text (+I[a, 1]), and prints result tables
// the way Flink's SQL client does in tableau mode. FormatValue (with AppendTypedValue,
// which gives a TIMESTAMP(p) its p digits) is the one place that decides how a value
// prints as text. Connectors and the CLI use this package; it does no I/O of its own
// except WriteTable, and it never panics on input.
package format
