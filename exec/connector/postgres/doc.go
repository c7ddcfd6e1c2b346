// Package postgres is the PostgreSQL sink (connector 'postgres', and 'jdbc' with a
// jdbc:postgresql:// url, so Flink scripts run unchanged). It registers itself with
// package connector.
package postgres

import "github.com/streamsql/streamsql/exec/connector"

// Sink is the connector 'postgres' (and 'jdbc').
var Sink connector.SinkConnector
