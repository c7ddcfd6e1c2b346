// Package postgres is the PostgreSQL sink (connector 'postgres', and 'jdbc' with a
// jdbc:postgresql:// url, so Flink scripts run unchanged). It registers itself with
// package connector.
package postgres
