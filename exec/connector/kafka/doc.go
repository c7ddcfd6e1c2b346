// Package kafka is the Kafka connectors: 'kafka', a replayable, parallel source and an
// append-only sink (but for the changelog formats), and 'upsert-kafka' (upsert.go), a
// keyed topic as a table whose source normalizes upserts and tombstones into a changelog
// and whose sink writes them, configured by Flink's Kafka SQL options and speaking
// the Kafka protocol through franz-go. Records are one line of the table's format each
// (package format converts them); this package owns the clients, offsets and
// transactions.
//
// The source (source.go) splits the topic's partitions among its tasks, partition p to
// task p % tasks, each reading its partitions by direct assignment; its snapshot is the
// next offset of every partition (state.go), and a completed checkpoint commits those
// offsets to 'properties.group.id' for monitoring only. METADATA columns (metadata.go)
// come from each record, or, for a changelog value format's value.* keys, from the
// format's metadata decoder.
//
// The sink (sink.go) produces asynchronously and waits for every acknowledgement at
// each barrier (at-least-once), or (exactly-once, txn.go) spools each checkpoint's rows
// to a file and produces them in one Kafka transaction when the checkpoint completes,
// with a marker offset committed in the same transaction so that a restarted sink
// commits each checkpoint's rows exactly once; spooled records keep the timestamp and
// headers that METADATA columns write.
package kafka
