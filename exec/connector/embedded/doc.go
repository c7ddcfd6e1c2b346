// Package embedded is the embedded table (connector 'embedded'): a table with a
// primary key kept in a bbolt file, which needs no server. As a sink it applies a
// changelog as upserts and deletes; as a source it is a bounded scan of the table's
// content, which another streamsql process may read while a job writes it; as a lookup
// join's table, a read transaction per batch of keys.
package embedded
