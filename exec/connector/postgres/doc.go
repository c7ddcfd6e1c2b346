// Package postgres is the PostgreSQL sink (connector 'postgres', and 'jdbc' with a
// jdbc:postgresql:// url, so Flink scripts run unchanged): it writes a job's changelog
// to a table through pgx, appending rows, or upserting and deleting them by primary
// key, at least once or, with checkpoints, exactly once through a write-ahead spool and
// a commit table. As a lookup join's table (Lookup) it runs one query per batch of
// keys. The root package's connector registry maps both names to Sink and Lookup.
package postgres
